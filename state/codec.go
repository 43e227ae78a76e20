package state

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/infra-iac/infra/spec"
)

// What to do about a record that cannot be trusted. The ledger can be
// rebuilt from the ownership tags; the cache is only what was last seen, so
// it can simply be thrown away.
const (
	ledgerRemedy = "move it aside and run `infra discover --write` to rebuild the ledger from the ownership tags"
	cacheRemedy  = "delete it: the cache only records what was last seen, and the next `infra refresh` writes it again"
	// The published record is what the last apply resolved; the next
	// apply writes it again.
	publishedRemedy = "run `infra apply` on the fleet to publish it again"
	// Claims are what consumers recorded; each consumer's next apply
	// records its own again.
	claimsRemedy = "move it aside and apply each consumer fleet again: each records its own claim"
)

// record describes one of the two records for the codec's messages.
type record struct {
	name    string // "ledger" or "cache"
	version int    // the version this build understands
	remedy  string
}

var (
	ledgerRecord    = record{"ledger", LedgerVersion, ledgerRemedy}
	cacheRecord     = record{"cache", CacheVersion, cacheRemedy}
	publishedRecord = record{"published record", spec.PublishedVersion, publishedRemedy}
	claimsRecord    = record{"claims", spec.ClaimsVersion, claimsRemedy}
)

// EncodePublished writes a fleet's published record, sealed (its version
// and hash set). A secret export holds a reference: the record has no
// field for a secret's value, and a spec.Sensitive would marshal as
// "(sensitive)".
func EncodePublished(p *spec.Published) ([]byte, error) {
	c := *p
	if c.Capabilities == nil {
		c.Capabilities = map[string]spec.PublishedCapability{}
	}
	c.Seal()
	return encode(c)
}

// EncodeClaims writes a provider's claims record.
func EncodeClaims(c *spec.Claims) ([]byte, error) {
	out := spec.Claims{Version: spec.ClaimsVersion, Capabilities: map[string][]spec.Claim{}}
	if c != nil {
		for k, v := range c.Capabilities {
			out.Capabilities[k] = v
		}
		out.Generation, out.Withdrawn = c.Generation, c.Withdrawn
	}
	return encode(out)
}

// DecodeClaims reads a claims record.
func DecodeClaims(data []byte) (*spec.Claims, error) {
	if err := checkVersion(claimsRecord, data); err != nil {
		return nil, err
	}
	var c spec.Claims
	if err := json.Unmarshal(data, &c); err != nil {
		return nil, claimsRecord.notOurs(err, data)
	}
	return &c, nil
}

func newClaims() *spec.Claims {
	return &spec.Claims{Version: spec.ClaimsVersion, Capabilities: map[string][]spec.Claim{}}
}

// DecodePublished reads a published record, refusing one of another
// version or whose hash does not match its content.
func DecodePublished(data []byte) (*spec.Published, error) {
	if err := checkVersion(publishedRecord, data); err != nil {
		return nil, err
	}
	var p spec.Published
	if err := json.Unmarshal(data, &p); err != nil {
		return nil, publishedRecord.notOurs(err, data)
	}
	written := p.Hash
	p.Seal()
	if written != p.Hash {
		return nil, publishedRecord.refuse("does not match its own hash (%s written, %s computed): it was edited or cut short; %s", written, p.Hash, publishedRemedy)
	}
	return &p, nil
}

func (r record) refuse(format string, args ...any) *FormatError {
	return &FormatError{Record: r.name, Detail: fmt.Sprintf(format, args...)}
}

// refuseProblem adds the way out to a problem found in a well-formed file.
// When a newer build may have written it, upgrading comes first.
func (r record) refuseProblem(problem string, newer bool) *FormatError {
	if newer {
		return r.refuse("%s: upgrade infra if a newer build wrote it; otherwise %s", problem, r.remedy)
	}
	return r.refuse("%s; %s", problem, r.remedy)
}

// notOurs is the refusal for bytes that do not even have infra's shape.
func (r record) notOurs(err error, data []byte) *FormatError {
	return r.refuse("is not a file infra wrote: %s; %s", jsonProblem(err, data), r.remedy)
}

// EncodeLedger writes l as pretty-printed JSON in this build's format, rows
// sorted by address, an empty ledger as "rows": []. It refuses a ledger it
// would refuse to read back, so a bad row fails the run that made it rather
// than every run after.
func EncodeLedger(l *Ledger) ([]byte, error) {
	rows := []Row{}
	if l != nil {
		rows = append(rows, l.Rows...)
	}
	sort.SliceStable(rows, func(i, j int) bool { return rows[i].Address().Less(rows[j].Address()) })
	if p, _ := rowProblem(rows); p != "" {
		return nil, fmt.Errorf("refusing to write the ledger: it %s", p)
	}
	var intents []Intent
	if l != nil {
		intents = append(intents, l.Intents...)
	}
	sort.SliceStable(intents, func(i, j int) bool { return intents[i].Address().Less(intents[j].Address()) })
	if p, _ := intentProblem(intents); p != "" {
		return nil, fmt.Errorf("refusing to write the ledger: it %s", p)
	}
	return encode(Ledger{Version: LedgerVersion, Rows: rows, Intents: intents})
}

// intentProblem is rowProblem for the intents.
func intentProblem(intents []Intent) (problem string, unknown bool) {
	rows := make([]Row, len(intents))
	for i, in := range intents {
		rows[i] = in.Row
	}
	p, newer := rowProblem(rows)
	return strings.Replace(strings.Replace(p, "a row", "an intent", 1), "two rows", "two intents", 1), newer
}

// DecodeLedger reads a ledger, refusing (with a *FormatError that says what
// to do) anything this build did not write or cannot understand.
func DecodeLedger(data []byte) (*Ledger, error) {
	if err := checkVersion(ledgerRecord, data); err != nil {
		return nil, err
	}
	var body struct {
		Rows    []Row    `json:"rows"`
		Intents []Intent `json:"intents"`
	}
	if err := json.Unmarshal(data, &body); err != nil {
		return nil, ledgerRecord.notOurs(err, data)
	}
	l := &Ledger{Version: LedgerVersion, Rows: body.Rows, Intents: body.Intents}
	if l.Rows == nil {
		l.Rows = []Row{}
	}
	if p, newer := rowProblem(l.Rows); p != "" {
		return nil, ledgerRecord.refuseProblem(p, newer)
	}
	if p, newer := intentProblem(l.Intents); p != "" {
		return nil, ledgerRecord.refuseProblem(p, newer)
	}
	l.sortRows()
	sort.Slice(l.Intents, func(i, j int) bool { return l.Intents[i].Address().Less(l.Intents[j].Address()) })
	return l, nil
}

// EncodeCache writes c as pretty-printed JSON in this build's format,
// resources keyed (and so sorted) by address. A spec.Sensitive anywhere in
// Fields marshals as "(sensitive)", so the cache cannot carry a secret.
func EncodeCache(c *Cache) ([]byte, error) {
	res := map[string]Observed{}
	if c != nil {
		for k, v := range c.Resources {
			res[k] = v
		}
	}
	for k := range res {
		if d, _ := checkKey(k); d != "" {
			return nil, fmt.Errorf("refusing to write the cache: resource %q %s", k, d)
		}
	}
	return encode(Cache{Version: CacheVersion, Resources: res})
}

// DecodeCache reads a cache, refusing what DecodeLedger refuses, with the
// cache's own way out.
func DecodeCache(data []byte) (*Cache, error) {
	// One pass for the version and the resources' bytes (a plan from the
	// cache reads it every time), then one over the resources.
	var body struct {
		Version   json.RawMessage `json:"version"`
		Resources json.RawMessage `json:"resources"`
	}
	if err := json.Unmarshal(data, &body); err != nil {
		return nil, cacheRecord.notOurs(err, data)
	}
	if err := versionProblem(cacheRecord, body.Version); err != nil {
		return nil, err
	}
	c := NewCache()
	if len(body.Resources) == 0 || string(body.Resources) == "null" {
		return c, nil
	}
	// encoding/json keeps the last of two equal keys without a word, so the
	// object is walked key by key to see a repeated resource.
	dec := json.NewDecoder(bytes.NewReader(body.Resources))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, cacheRecord.refuse("is not a file infra wrote: \"resources\" is not an object; %s", cacheRemedy)
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, cacheRecord.notOurs(err, data)
		}
		key, _ := tok.(string) // object keys are always strings
		var o Observed
		if err := dec.Decode(&o); err != nil {
			return nil, cacheRecord.notOurs(fmt.Errorf("resource %q: %w", key, err), data)
		}
		if _, dup := c.Resources[key]; dup {
			return nil, cacheRecord.refuse("has two entries for %s, which infra never writes; %s", key, cacheRemedy)
		}
		if d, newer := checkKey(key); d != "" {
			return nil, cacheRecord.refuseProblem(fmt.Sprintf("has an entry %q that %s", key, d), newer)
		}
		c.Resources[key] = o
	}
	return c, nil
}

func encode(v any) ([]byte, error) {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(data, '\n'), nil
}

// checkVersion refuses, before anything else is read, bytes that are not a
// JSON object or whose version is missing or not this build's: a newer
// format may give the other keys another meaning.
func checkVersion(r record, data []byte) *FormatError {
	var head struct {
		Version json.RawMessage `json:"version"`
	}
	if err := json.Unmarshal(data, &head); err != nil {
		return r.notOurs(err, data)
	}
	return versionProblem(r, head.Version)
}

// versionProblem is checkVersion's verdict on a version already read.
func versionProblem(r record, version json.RawMessage) *FormatError {
	if len(version) == 0 || string(version) == "null" {
		return r.refuse("has no format version, so it is not a file infra wrote; %s", r.remedy)
	}
	n, err := strconv.Atoi(string(version))
	if err != nil {
		return r.refuse("has the format version %s, which is not a number infra writes; %s", version, r.remedy)
	}
	if n > r.version {
		return r.refuse("is in format version %d, but this build understands %d: upgrade infra", n, r.version)
	}
	if n != r.version {
		return r.refuse("is in format version %d, which infra never wrote (this build understands %d); %s", n, r.version, r.remedy)
	}
	return nil
}

// rowProblem says what is wrong with rows, or "": a row naming an unknown
// provider or kind (unknown is then true: a newer build may have written
// it), a kind the provider does not offer, a malformed name, or an address
// twice. Rows are numbered from 1 as they stand, sorted or not.
func rowProblem(rows []Row) (problem string, unknown bool) {
	first := map[spec.Address]int{}
	for i, row := range rows {
		a := row.Address()
		if d, newer := checkAddress(a); d != "" {
			return fmt.Sprintf("has a row, %s (row %d), that %s", a, i+1, d), newer
		}
		if j, dup := first[a]; dup {
			return fmt.Sprintf("has two rows for %s (rows %d and %d), which infra never writes", a, j+1, i+1), false
		}
		first[a] = i
	}
	return "", false
}

// checkKey is checkAddress for a cache key, which is an address's text.
func checkKey(key string) (problem string, newer bool) {
	a, err := spec.ParseAddress(key)
	if err != nil {
		return "is not an address (want provider/kind/name)", false
	}
	return checkAddress(a)
}

// checkAddress says what is wrong with an address a record holds, or "".
// newer is true when a newer build may know what this one does not (a
// provider, a kind, a kind's new home), which turns into advice to upgrade.
func checkAddress(a spec.Address) (problem string, newer bool) {
	if !a.Provider.Known() {
		return fmt.Sprintf("names the provider %q, which this build does not know (it knows %s)", a.Provider, knownProviders()), true
	}
	info, ok := spec.Lookup(a.Kind)
	if !ok {
		return fmt.Sprintf("names the kind %q, which this build does not know", a.Kind), true
	}
	if !info.OfferedBy(a.Provider) {
		return fmt.Sprintf("names the kind %q, which this build does not offer on %q", a.Kind, a.Provider), true
	}
	if a.Name == "" || strings.Contains(a.Name, "/") {
		return fmt.Sprintf("has the name %q, which is not a resource name (empty, or containing '/')", a.Name), false
	}
	return "", false
}

func knownProviders() string {
	names := make([]string, len(spec.Providers))
	for i, p := range spec.Providers {
		names[i] = string(p)
	}
	return strings.Join(names, ", ")
}

// jsonProblem adds a line and column to a syntax error, so a hand-edited
// file can be fixed where it broke.
func jsonProblem(err error, data []byte) string {
	var syn *json.SyntaxError
	if !errors.As(err, &syn) {
		return err.Error()
	}
	before := data[:min(int(syn.Offset), len(data))]
	line := bytes.Count(before, []byte("\n")) + 1
	// The offset is just past the byte the parser stopped at.
	col := max(len(before)-bytes.LastIndexByte(before, '\n')-1, 1)
	return fmt.Sprintf("%s (line %d, column %d)", err, line, col)
}
