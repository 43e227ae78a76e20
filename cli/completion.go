package cli

import (
	"context"
	"slices"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/infra-iac/infra/spec"
)

// completions registers the dynamic completions: --target and --replace
// complete the fleet's declared addresses wherever a verb takes them,
// --fleet a document or a program's directory, and output its
// capabilities. cobra's own completion verb writes the shell scripts that
// call them (infra __complete …; docs/cli.md, "Shell completion").
//
// Each answer comes from the document alone, as the verb would load it
// (--fleet, or the document a fleet program passed in): no cloud is
// called and no state is read, so a completion needs no credentials. A
// document that cannot be read completes nothing; its error is never
// printed, on stdout least of all, where the shell reads the candidates.
func (g *globals) completions(root *cobra.Command) {
	walkCommands(root, func(c *cobra.Command) {
		for _, name := range []string{"target", "replace"} {
			if c.Flags().Lookup(name) != nil {
				_ = c.RegisterFlagCompletionFunc(name, g.completeAddresses)
			}
		}
		if c.Flags().Lookup("fleet") != nil {
			_ = c.RegisterFlagCompletionFunc("fleet", func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
				// A .json document, or a directory: a fleet program.
				return []string{"json"}, cobra.ShellCompDirectiveFilterFileExt
			})
		}
	})
	if out, _, err := root.Find([]string{"output"}); err == nil && out != root {
		out.ValidArgsFunction = g.completeCapabilities
	}
}

func walkCommands(c *cobra.Command, fn func(*cobra.Command)) {
	fn(c)
	for _, sub := range c.Commands() {
		walkCommands(sub, fn)
	}
}

// completeAddresses answers --target and --replace: the declared
// resources whose address starts with what was typed.
func (g *globals) completeAddresses(c *cobra.Command, _ []string, typed string) ([]string, cobra.ShellCompDirective) {
	doc := g.completionDocument(c)
	if doc == nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	var out []string
	for _, r := range doc.Resources {
		if _, err := spec.ParseAddress(r.Address); err != nil || !completable(r.Address) {
			continue
		}
		if strings.HasPrefix(r.Address, typed) && !slices.Contains(out, r.Address) {
			out = append(out, r.Address)
		}
	}
	sort.Strings(out)
	return out, cobra.ShellCompDirectiveNoFileComp
}

// completeCapabilities answers infra output's argument: the capabilities
// the document provides, each with its interface, and once one is named
// with a dot its exports (CAPABILITY.EXPORT).
func (g *globals) completeCapabilities(c *cobra.Command, args []string, typed string) ([]string, cobra.ShellCompDirective) {
	if len(args) > 0 {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	doc := g.completionDocument(c)
	if doc == nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	var out []string
	if name, _, dotted := strings.Cut(typed, "."); dotted {
		for export := range doc.Provides[name].Exports {
			if v := name + "." + export; strings.HasPrefix(v, typed) && completable(v) {
				out = append(out, v)
			}
		}
		sort.Strings(out)
		return out, cobra.ShellCompDirectiveNoFileComp
	}
	for name, p := range doc.Provides {
		if !strings.HasPrefix(name, typed) || !completable(name) {
			continue
		}
		if completable(p.Interface) && p.Interface != "" {
			out = append(out, name+"\t"+p.Interface)
		} else {
			out = append(out, name)
		}
	}
	sort.Strings(out)
	return out, cobra.ShellCompDirectiveNoFileComp
}

// completionDocument is the fleet document the verb would load, or nil
// when it cannot be read. A fleet program's directory is run (go run DIR
// synth): local, cached by Go after its first build, and with no call to
// any cloud; its stderr is the shell's, which completion scripts discard.
func (g *globals) completionDocument(c *cobra.Command) *spec.Document {
	ctx := c.Context()
	if ctx == nil {
		ctx = context.Background()
	}
	doc, err := g.loadDocument(ctx)
	if err != nil {
		return nil
	}
	return doc
}

// completable is a candidate a shell may be handed: printable, without
// the blanks and tabs that would split or describe it.
func completable(s string) bool {
	return s != "" && spec.Printable(s) == s && !strings.ContainsAny(s, " \t\n")
}
