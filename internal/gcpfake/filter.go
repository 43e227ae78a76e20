package gcpfake

import (
	"encoding/base64"
	"fmt"
	"hash/fnv"
	"regexp"
	"strconv"
	"strings"
)

// filter is a parsed list filter (AIP-160's syntax, the part modelled):
// terms that must all hold. A filter the fake cannot evaluate is refused
// with INVALID_ARGUMENT, never ignored: ignoring it would list what the
// caller excluded.
type filter []filterTerm

type filterTerm struct {
	field string // labels.team, name, state
	op    string // = or :
	value string
}

// filterForms says which terms a list models, and names them for the
// refusal.
type filterForms struct {
	ok   func(filterTerm) bool
	name string
}

var secretFilterFields = filterForms{
	name: "labels.KEY=VALUE, labels.KEY:*, name:SUBSTRING",
	ok: func(t filterTerm) bool {
		switch {
		case strings.HasPrefix(t.field, "labels.") && len(t.field) > len("labels."):
			return t.op == "=" || t.value == "*"
		case t.field == "name":
			return t.op == ":" && !strings.Contains(t.value, "*")
		}
		return false
	},
}

var versionFilterFields = filterForms{
	name: "state:STATE, state=STATE",
	ok:   func(t filterTerm) bool { return t.field == "state" },
}

var termRE = regexp.MustCompile(`^([A-Za-z_][A-Za-z0-9_.-]*)\s*(=|:)\s*("(?:[^"\\]|\\.)*"|[^\s"()]+)`)

// parseFilter reads terms joined by AND or by spaces (an implicit AND).
// OR, NOT, -, parentheses, comparisons and unmodelled fields are refused.
func parseFilter(f string, forms filterForms) (filter, error) {
	var out filter
	rest := strings.TrimSpace(f)
	for rest != "" {
		if after, ok := strings.CutPrefix(rest, "AND "); ok && len(out) > 0 {
			rest = strings.TrimSpace(after)
			continue
		}
		m := termRE.FindStringSubmatch(rest)
		if m == nil {
			return nil, refuseFilter(f, rest, forms)
		}
		t := filterTerm{field: m[1], op: m[2], value: m[3]}
		if strings.HasPrefix(t.value, `"`) {
			t.value, _ = strconv.Unquote(t.value) // the pattern admits only well-formed quotes
		}
		if !forms.ok(t) {
			return nil, refuseFilter(f, m[0], forms)
		}
		out = append(out, t)
		rest = strings.TrimSpace(rest[len(m[0]):])
	}
	return out, nil
}

func refuseFilter(f, at string, forms filterForms) error {
	return invalid("Invalid filter %q at %q: gcpfake models only %s, joined by AND or spaces.", f, at, forms.name)
}

// match reports whether a resource's JSON satisfies every term.
func (f filter) match(obj map[string]any) bool {
	for _, t := range f {
		if !t.match(obj) {
			return false
		}
	}
	return true
}

func (t filterTerm) match(obj map[string]any) bool {
	if key, ok := strings.CutPrefix(t.field, "labels."); ok {
		labels, _ := obj["labels"].(map[string]any)
		v, has := labels[key]
		if t.value == "*" && t.op == ":" {
			return has
		}
		return has && v == t.value
	}
	got, _ := obj[t.field].(string)
	if t.op == ":" && t.field == "name" {
		return strings.Contains(got, t.value)
	}
	return got == t.value
}

// maxPageSize is the API's cap on pageSize; it is also the page the fake
// answers when the caller leaves the size to the server.
const maxPageSize = 25000

// paginate slices a list of n items by pageSize and pageToken. Tokens are
// opaque and bound to their list (method, parent, filter): one from
// another list is INVALID_ARGUMENT, as a stale cursor is.
func paginate(c *call, n int) (start, end int, next string, err error) {
	size, _ := strconv.Atoi(c.query.Get("pageSize")) // checked as int32
	if size < 0 {
		return 0, 0, "", invalid("page_size must not be negative.")
	}
	if size == 0 || size > maxPageSize {
		size = maxPageSize
	}
	key := c.m.ID + " " + c.params["parent"] + " " + c.query.Get("filter")
	if tok := c.query.Get("pageToken"); tok != "" {
		var ok bool
		if start, ok = decodePageToken(tok, key); !ok {
			return 0, 0, "", invalid("Invalid page token %q.", tok)
		}
		start = min(start, n)
	}
	end = min(start+size, n)
	if end < n {
		next = encodePageToken(end, key)
	}
	return start, end, next, nil
}

func listHash(key string) string {
	h := fnv.New64a()
	h.Write([]byte(key))
	return strconv.FormatUint(h.Sum64(), 36)
}

func encodePageToken(offset int, key string) string {
	return base64.RawURLEncoding.EncodeToString(fmt.Appendf(nil, "%d:%s", offset, listHash(key)))
}

func decodePageToken(tok, key string) (int, bool) {
	b, err := base64.RawURLEncoding.DecodeString(tok)
	if err != nil {
		return 0, false
	}
	off, hash, _ := strings.Cut(string(b), ":")
	n, err := strconv.Atoi(off)
	return n, err == nil && n >= 0 && hash == listHash(key)
}
