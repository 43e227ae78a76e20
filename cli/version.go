package cli

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"

	"github.com/infra-iac/infra/render"
)

// sdkModule is this repository's module: the command and the SDK fleet
// programs import.
const sdkModule = "github.com/infra-iac/infra"

// versionInfo is what `infra version` reports, read from the binary's build
// info so that it is true of the binary, not of a constant someone forgot
// to bump.
type versionInfo struct {
	Module string `json:"module"`
	// Version is the infra module's version: the main module's for the
	// infra command, the dependency's for a fleet program.
	Version string `json:"version"`
	// Replace is the directory or module that replaced the SDK in a fleet
	// program's go.mod.
	Replace string `json:"replace,omitempty"`
	// Program is the main module when it is not infra: a fleet program
	// built with fleet.Main.
	Program        string `json:"program,omitempty"`
	ProgramVersion string `json:"programVersion,omitempty"`
	// The commit the main module was built from (go build stamps it in a
	// repository unless -buildvcs=false).
	Commit     string `json:"commit,omitempty"`
	CommitTime string `json:"commitTime,omitempty"`
	Modified   *bool  `json:"modified,omitempty"`
	Go         string `json:"go"`
	Platform   string `json:"platform"`
}

func currentVersion() versionInfo {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return versionFrom(nil)
	}
	return versionFrom(bi)
}

// versionFrom reads bi, which is nil when the binary has none.
func versionFrom(bi *debug.BuildInfo) versionInfo {
	v := versionInfo{Module: sdkModule, Version: "(unknown)", Go: runtime.Version()}
	goos, goarch := runtime.GOOS, runtime.GOARCH
	if bi == nil {
		v.Platform = goos + "/" + goarch
		return v
	}
	if bi.GoVersion != "" {
		v.Go = bi.GoVersion
	}
	if bi.Main.Path == sdkModule {
		v.Version = bi.Main.Version
	} else {
		v.Program, v.ProgramVersion = bi.Main.Path, bi.Main.Version
		for _, d := range bi.Deps {
			if d.Path != sdkModule {
				continue
			}
			v.Version = d.Version
			if d.Replace != nil {
				v.Replace = d.Replace.Path
				// A directory replacement's version is (devel): only
				// a module replacement has one worth naming.
				if d.Replace.Version != "" && d.Replace.Version != "(devel)" {
					v.Replace += "@" + d.Replace.Version
				}
			}
		}
	}
	for _, s := range bi.Settings {
		switch s.Key {
		case "GOOS":
			goos = s.Value
		case "GOARCH":
			goarch = s.Value
		case "vcs.revision":
			v.Commit = s.Value
		case "vcs.time":
			v.CommitTime = s.Value
		case "vcs.modified":
			m := s.Value == "true"
			v.Modified = &m
		}
	}
	v.Platform = goos + "/" + goarch
	return v
}

// String is the one line `infra version` and `infra --version` print.
func (v versionInfo) String() string {
	parts := []string{"infra " + v.Version}
	if v.Replace != "" {
		parts[0] += " => " + v.Replace
	}
	if v.Program != "" {
		parts = append(parts, "in fleet program "+v.Program+" "+v.ProgramVersion)
	}
	if v.Commit != "" {
		commit := v.Commit
		if len(commit) > 12 {
			commit = commit[:12]
		}
		var about []string
		if v.CommitTime != "" {
			about = append(about, v.CommitTime)
		}
		if v.Modified != nil && *v.Modified {
			about = append(about, "modified")
		}
		if len(about) > 0 {
			commit += " (" + strings.Join(about, ", ") + ")"
		}
		parts = append(parts, "commit "+commit)
	}
	parts = append(parts, v.Go+" "+v.Platform)
	return strings.Join(parts, ", ")
}

func newVersion(g *globals) *cobra.Command {
	var asJSON bool
	c := &cobra.Command{
		Use:   "version",
		Short: "Print the version of infra, the commit it was built from and the Go that built it",
		RunE: func(c *cobra.Command, args []string) error {
			v := currentVersion()
			out := g.io().Out
			if asJSON {
				return render.JSON(out, v)
			}
			_, err := fmt.Fprintln(out, v)
			return err
		},
	}
	c.Flags().BoolVar(&asJSON, "json", false, "print the version as a JSON object")
	return c
}
