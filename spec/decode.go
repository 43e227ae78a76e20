package spec

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"unicode/utf8"
)

// MaxDepth is how deeply objects and lists may nest in a fleet document.
// The deepest real field (a policy document's condition values) is about a
// dozen levels down; the bound keeps every recursive walk of a document
// shallow, whatever a pull request sends.
const MaxDepth = 100

// DecodeError is a document that cannot be read at all: the place, counted
// from 1 (the column in characters, as an editor counts), and the problem
// in the document's own terms.
type DecodeError struct {
	Line, Column int
	Problem      string
	// Syntax is set when the bytes are not JSON; otherwise a known key has
	// the wrong shape, or a key is written twice.
	Syntax bool
	// Err is the underlying cause, when there is one.
	Err error
}

func (e *DecodeError) Error() string {
	return fmt.Sprintf("line %d, column %d: %s", e.Line, e.Column, e.Problem)
}

func (e *DecodeError) Unwrap() error { return e.Err }

// reader reads one fleet document in a single pass, knowing at each point
// what the document expects there. It exists instead of encoding/json
// because the document is user input from pull requests: a key written
// twice must be refused rather than the last one winning, and a mistake
// must be named by its line, its column and the document's own words.
// Values inside a spec decode exactly as encoding/json decodes them into
// any (float64 numbers, strings with invalid UTF-8 replaced).
type reader struct {
	data  []byte
	i     int
	depth int
}

const valueWords = "a value (an object, a list, a string, a number, true, false or null)"

func (r *reader) fail(at int, syntax bool, err error, format string, args ...any) *DecodeError {
	line, col := position(r.data, at)
	return &DecodeError{Line: line, Column: col, Problem: fmt.Sprintf(format, args...), Syntax: syntax, Err: err}
}

// position turns a byte offset into a line and a column of characters.
func position(data []byte, at int) (line, col int) {
	at = min(max(at, 0), len(data))
	line = 1 + bytes.Count(data[:at], []byte("\n"))
	start := bytes.LastIndexByte(data[:at], '\n') + 1
	return line, 1 + utf8.RuneCount(data[start:at])
}

// found describes what is at r.i, for "expected …, found …".
func (r *reader) found() string {
	if r.i >= len(r.data) {
		return "the end of the document"
	}
	_, size := utf8.DecodeRune(r.data[r.i:])
	return "'" + Printable(string(r.data[r.i:r.i+size])) + "'"
}

func (r *reader) space() {
	for r.i < len(r.data) {
		switch r.data[r.i] {
		case ' ', '\t', '\n', '\r':
			r.i++
		default:
			return
		}
	}
}

// kind names the JSON value starting at r.i in the words of an error
// ("an object", "a number"), or "" when no value starts there.
func (r *reader) kind() string {
	if r.i >= len(r.data) {
		return ""
	}
	switch c := r.data[r.i]; {
	case c == '{':
		return "an object"
	case c == '[':
		return "a list"
	case c == '"':
		return "a string"
	case c == '-' || (c >= '0' && c <= '9'):
		return "a number"
	case bytes.HasPrefix(r.data[r.i:], []byte("true")):
		return "true"
	case bytes.HasPrefix(r.data[r.i:], []byte("false")):
		return "false"
	case bytes.HasPrefix(r.data[r.i:], []byte("null")):
		return "null"
	}
	return ""
}

// notValue is the syntax error where a value should start.
func (r *reader) notValue() error {
	if r.i >= len(r.data) {
		return r.fail(r.i, true, nil, "the document ends where %s should be", valueWords)
	}
	return r.fail(r.i, true, nil, "expected %s, found %s", valueWords, r.found())
}

// wrongShape is the error for a value of the wrong kind: what it is, when
// a value starts at r.i at all, else the syntax error.
func (r *reader) wrongShape(what func() string, want string) error {
	k := r.kind()
	if k == "" {
		return r.notValue()
	}
	return r.fail(r.i, false, nil, "%s must be %s, not %s", what(), want, k)
}

func (r *reader) isNull() bool {
	if bytes.HasPrefix(r.data[r.i:], []byte("null")) {
		r.i += 4
		return true
	}
	return false
}

// object reads an object, calling member with each key once r.i is at its
// value; member must read the value. null is an absent object.
func (r *reader) object(what func() string, want string, member func(key string) error) error {
	return r.container('{', what, want, func() error { return r.members(member) })
}

// list reads a list, calling item with each index once r.i is at the
// item; item must read it. null is an absent list.
func (r *reader) list(what func() string, want string, item func(i int) error) error {
	return r.container('[', what, want, func() error { return r.items(item) })
}

// container reads, with read, the object or list that opens with open at
// r.i; null is an absent one.
func (r *reader) container(open byte, what func() string, want string, read func() error) error {
	r.space()
	if r.i < len(r.data) && r.data[r.i] == open {
		return read()
	}
	if r.isNull() {
		return nil
	}
	return r.wrongShape(what, want)
}

// members reads the object at r.i ('{'), refusing a key written twice.
func (r *reader) members(member func(key string) error) error {
	open, err := r.enter()
	if err != nil {
		return err
	}
	var keys keySet
	for first := true; ; first = false {
		r.space()
		if r.i >= len(r.data) {
			return r.unclosed(open, "object")
		}
		if r.data[r.i] == '}' {
			if !first {
				return r.fail(r.i, true, nil, "expected a key in double quotes, found '}': JSON allows no comma before '}'")
			}
			r.leave()
			return nil
		}
		key, err := r.key(&keys)
		if err != nil {
			return err
		}
		if err := member(key); err != nil {
			return err
		}
		more, err := r.separator(open, "object", '}', func() string { return "the value of " + quoted(key) })
		if !more {
			return err
		}
	}
}

// key reads a member's key and its ':', refusing one keys has seen.
func (r *reader) key(keys *keySet) (string, error) {
	if r.data[r.i] != '"' {
		return "", r.fail(r.i, true, nil, "expected a key in double quotes, found %s", r.found())
	}
	at := r.i
	key, err := r.stringToken()
	if err != nil {
		return "", err
	}
	if prev, seen := keys.add(key, at); seen {
		line, col := position(r.data, prev)
		return "", r.fail(at, false, nil, "duplicate key %s (first at line %d, column %d): a key may appear once in an object",
			quoted(key), line, col)
	}
	r.space()
	if r.i >= len(r.data) || r.data[r.i] != ':' {
		return "", r.fail(r.i, true, nil, "expected ':' after the key %s, found %s", quoted(key), r.found())
	}
	r.i++
	r.space()
	return key, nil
}

// keySet is the keys of one object and where each was written. Most objects
// have a handful of keys: a scan of a small array, on the stack, beats a map
// until they have many.
type keySet struct {
	seen  [16]seenKey
	n     int
	index map[string]int
}

type seenKey struct {
	key string
	at  int
}

// add records key at offset at, unless it is there already: then prev is
// where it was first written.
func (s *keySet) add(key string, at int) (prev int, seen bool) {
	if s.index != nil {
		if p, ok := s.index[key]; ok {
			return p, true
		}
		s.index[key] = at
		return 0, false
	}
	for _, k := range s.seen[:s.n] {
		if k.key == key {
			return k.at, true
		}
	}
	if s.n < len(s.seen) {
		s.seen[s.n] = seenKey{key, at}
		s.n++
		return 0, false
	}
	s.index = make(map[string]int, 2*s.n)
	for _, k := range s.seen[:s.n] {
		s.index[k.key] = k.at
	}
	s.index[key] = at
	return 0, false
}

func (r *reader) items(item func(i int) error) error {
	open, err := r.enter()
	if err != nil {
		return err
	}
	for n := 0; ; n++ {
		r.space()
		if r.i >= len(r.data) {
			return r.unclosed(open, "list")
		}
		if r.data[r.i] == ']' {
			if n > 0 {
				return r.fail(r.i, true, nil, "expected %s, found ']': JSON allows no comma before ']'", valueWords)
			}
			r.leave()
			return nil
		}
		if err := item(n); err != nil {
			return err
		}
		more, err := r.separator(open, "list", ']', func() string { return fmt.Sprintf("item %d of the list", n+1) })
		if !more {
			return err
		}
	}
}

// separator reads what follows a member or an item of the object or list
// opened at open: more after a ',', none after the closing byte.
func (r *reader) separator(open int, noun string, closing byte, after func() string) (more bool, err error) {
	r.space()
	if r.i >= len(r.data) {
		return false, r.unclosed(open, noun)
	}
	switch r.data[r.i] {
	case ',':
		r.i++
		return true, nil
	case closing:
		r.leave()
		return false, nil
	}
	return false, r.fail(r.i, true, nil, "expected ',' or '%c' after %s, found %s", closing, after(), r.found())
}

func (r *reader) unclosed(open int, noun string) error {
	return r.fail(open, true, nil, "the document ends before the %s that starts here is closed", noun)
}

// enter steps into the object or list at r.i, returning where it opens.
func (r *reader) enter() (open int, err error) {
	open = r.i
	r.depth++
	if r.depth > MaxDepth {
		return open, r.fail(r.i, false, nil, "the document is nested more than %d levels deep (objects and lists within one another); infra reads at most %d",
			MaxDepth, MaxDepth)
	}
	r.i++
	return open, nil
}

func (r *reader) leave() {
	r.i++
	r.depth--
}

// str reads a string; null is the empty string, as for encoding/json.
func (r *reader) str(what func() string, want string) (string, error) {
	r.space()
	if r.i < len(r.data) && r.data[r.i] == '"' {
		return r.stringToken()
	}
	if r.isNull() {
		return "", nil
	}
	return "", r.wrongShape(what, want)
}

// stringToken reads the string at r.i ('"').
func (r *reader) stringToken() (string, error) {
	start := r.i
	i := start + 1
	plain := true
	for {
		if i >= len(r.data) {
			return "", r.fail(start, true, nil, "the string that starts here is not closed")
		}
		c := r.data[i]
		switch {
		case c == '"':
			body := r.data[start+1 : i]
			r.i = i + 1
			if plain && utf8.Valid(body) {
				return string(body), nil
			}
			// Escapes, surrogates and invalid UTF-8 are decoded by
			// encoding/json itself, so a string means what it would mean
			// to any JSON reader.
			var s string
			if err := json.Unmarshal(r.data[start:i+1], &s); err != nil {
				return "", r.fail(start, true, err, "the string that starts here cannot be read")
			}
			return s, nil
		case c == '\\':
			plain = false
			if i+1 >= len(r.data) {
				return "", r.fail(start, true, nil, "the string that starts here is not closed")
			}
			switch r.data[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				for k := i + 2; k < i+6; k++ {
					if k >= len(r.data) || !isHex(r.data[k]) {
						return "", r.fail(i, true, nil, `\u in a string needs four hexadecimal digits, such as \u00e9`)
					}
				}
				i += 6
			default:
				_, size := utf8.DecodeRune(r.data[i+1:])
				return "", r.fail(i, true, nil, `invalid escape '\%s' in a string; the escapes are \" \\ \/ \b \f \n \r \t and \uXXXX`,
					Printable(string(r.data[i+1:i+1+size])))
			}
		case c < 0x20:
			return "", r.fail(i, true, nil, `a string may not hold a raw control character (%s); write it as an escape, such as \n`,
				Printable(string(rune(c))))
		default:
			i++
		}
	}
}

func isHex(c byte) bool {
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// number reads the number at r.i as encoding/json does into any.
func (r *reader) number() (float64, error) {
	start := r.i
	i := start
	digits := func() {
		for i < len(r.data) && isDigit(r.data[i]) {
			i++
		}
	}
	if r.data[i] == '-' {
		i++
	}
	if i >= len(r.data) || !isDigit(r.data[i]) {
		return 0, r.fail(i, true, nil, "a number needs a digit after '-'")
	}
	if r.data[i] == '0' {
		i++
	} else {
		digits()
	}
	if i < len(r.data) && r.data[i] == '.' {
		i++
		if i >= len(r.data) || !isDigit(r.data[i]) {
			return 0, r.fail(i, true, nil, "a number needs a digit after its '.'")
		}
		digits()
	}
	if i < len(r.data) && (r.data[i] == 'e' || r.data[i] == 'E') {
		i++
		if i < len(r.data) && (r.data[i] == '+' || r.data[i] == '-') {
			i++
		}
		if i >= len(r.data) || !isDigit(r.data[i]) {
			return 0, r.fail(i, true, nil, "a number needs a digit in its exponent")
		}
		digits()
	}
	text := string(r.data[start:i])
	f, err := strconv.ParseFloat(text, 64)
	if err != nil {
		return 0, r.fail(start, false, err, "the number %s is too large", text)
	}
	r.i = i
	return f, nil
}

// value reads any JSON value as encoding/json decodes it into any.
func (r *reader) value() (any, error) {
	r.space()
	if r.i >= len(r.data) {
		return nil, r.notValue()
	}
	switch c := r.data[r.i]; {
	case c == '{':
		m := map[string]any{}
		err := r.members(func(key string) error {
			v, err := r.value()
			m[key] = v
			return err
		})
		return m, err
	case c == '[':
		l := []any{}
		err := r.items(func(int) error {
			v, err := r.value()
			l = append(l, v)
			return err
		})
		return l, err
	case c == '"':
		return r.stringToken()
	case c == '-' || isDigit(c):
		return r.number()
	}
	for _, lit := range []struct {
		word string
		v    any
	}{{"true", true}, {"false", false}, {"null", nil}} {
		if bytes.HasPrefix(r.data[r.i:], []byte(lit.word)) {
			r.i += len(lit.word)
			return lit.v, nil
		}
	}
	return nil, r.notValue()
}

// unknown reads the value of a key the document does not know, keeping it
// in extra for UnknownKeys and the encoder.
func (r *reader) unknown(extra *map[string]json.RawMessage, key string) error {
	raw, err := r.raw()
	if err == nil {
		*extra = addExtra(*extra, key, raw)
	}
	return err
}

// raw reads any value and returns its bytes, for keys kept as written.
func (r *reader) raw() (json.RawMessage, error) {
	r.space()
	start := r.i
	if _, err := r.value(); err != nil {
		return nil, err
	}
	return json.RawMessage(r.data[start:r.i]), nil
}

// stringMap reads an object of strings (accounts, placement).
func (r *reader) stringMap(what, want, item string) (map[Provider]string, error) {
	var m map[Provider]string
	err := r.object(func() string { return what }, want, func(key string) error {
		s, err := r.str(func() string { return fmt.Sprintf(item, quoted(key)) }, "a string")
		if m == nil {
			m = map[Provider]string{}
		}
		m[Provider(key)] = s
		return err
	})
	return m, err
}

// document reads the top-level object.
func (r *reader) document() (*Document, error) {
	var doc Document
	r.space()
	if r.i >= len(r.data) {
		return nil, r.fail(r.i, true, nil, "the document is empty")
	}
	if r.data[r.i] != '{' {
		return nil, r.wrongShape(func() string { return "a fleet document" }, "an object ({…})")
	}
	err := r.members(func(key string) error {
		var err error
		switch key {
		case "apiVersion":
			doc.APIVersion, err = r.str(func() string { return `"apiVersion"` }, `a string, such as "infra/v1"`)
		case "fleet":
			doc.Fleet, err = r.str(func() string { return `"fleet"` }, "a string")
		case "accounts":
			doc.Accounts, err = r.stringMap(`"accounts"`, `an object of provider to account id, such as {"aws": "123456789012"}`,
				`the account of %s in "accounts"`)
		case "placement":
			doc.Placement, err = r.stringMap(`"placement"`, `an object of provider to region, such as {"aws": "eu-west-3"}`,
				`the region of %s in "placement"`)
		case "exclusions":
			err = r.list(func() string { return `"exclusions"` }, "a list of exclusions", func(i int) error {
				x, err := r.exclusion(i)
				doc.Exclusions = append(doc.Exclusions, x)
				return err
			})
		case "resources":
			err = r.list(func() string { return `"resources"` }, "a list of resources", func(i int) error {
				res, err := r.resource(i)
				doc.Resources = append(doc.Resources, res)
				return err
			})
		case "forget":
			err = r.list(func() string { return `"forget"` }, "a list of addresses", func(i int) error {
				s, err := r.str(func() string { return fmt.Sprintf(`item %d of "forget"`, i+1) }, "a string (an address)")
				doc.Forget = append(doc.Forget, s)
				return err
			})
		case "adopt":
			err = r.list(func() string { return `"adopt"` }, "a list of addresses", func(i int) error {
				s, err := r.str(func() string { return fmt.Sprintf(`item %d of "adopt"`, i+1) }, "a string (an address)")
				doc.Adopt = append(doc.Adopt, s)
				return err
			})
		case "interfaces":
			err = r.interfaces(&doc)
		case "provides":
			err = r.provides(&doc)
		case "exposes":
			err = r.exposes(&doc)
		case "uses":
			err = r.uses(&doc)
		case "wires":
			err = r.wires(&doc)
		case "components":
			err = r.components(&doc)
		default:
			err = r.unknown(&doc.extra, key)
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	r.space()
	if r.i < len(r.data) {
		return nil, r.fail(r.i, true, nil, "unexpected %s after the end of the document; a file holds one document", r.found())
	}
	return &doc, nil
}

// resource reads resource i (from 0) of "resources".
func (r *reader) resource(i int) (Resource, error) {
	var res Resource
	err := r.object(func() string { return fmt.Sprintf("resource %d", i+1) }, `an object with "address", "region" and "spec"`,
		func(key string) error {
			var err error
			switch key {
			case "address":
				res.Address, err = r.str(func() string { return fmt.Sprintf(`"address" of resource %d`, i+1) }, "a string")
			case "region":
				res.Region, err = r.str(func() string { return fmt.Sprintf(`"region" of resource %d`, i+1) }, "a string")
			case "spec":
				res.Spec = nil
				err = r.object(func() string { return fmt.Sprintf(`"spec" of resource %d`, i+1) }, "an object of fields",
					func(field string) error {
						v, err := r.value()
						if res.Spec == nil {
							res.Spec = map[string]any{}
						}
						res.Spec[field] = v
						return err
					})
			default:
				err = r.unknown(&res.extra, key)
			}
			return err
		})
	// An absent, null and empty spec all mean "no field set"; decode them
	// alike so that decoding what the encoder wrote gives the same value.
	if res.Spec == nil {
		res.Spec = map[string]any{}
	}
	return res, err
}

// exclusion reads exclusion i (from 0) of "exclusions".
func (r *reader) exclusion(i int) (Exclusion, error) {
	var x Exclusion
	err := r.object(func() string { return fmt.Sprintf("exclusion %d", i+1) }, `an object with "address" and "why"`,
		func(key string) error {
			var err error
			switch key {
			case "address":
				x.Address, err = r.str(func() string { return fmt.Sprintf(`"address" of exclusion %d`, i+1) }, "a string")
			case "why":
				x.Why, err = r.str(func() string { return fmt.Sprintf(`"why" of exclusion %d`, i+1) }, "a string")
			default:
				err = r.unknown(&x.extra, key)
			}
			return err
		})
	return x, err
}

// readDocument checks the encoding, then reads the document.
func readDocument(data []byte) (*Document, error) {
	switch {
	case bytes.HasPrefix(data, []byte("\xef\xbb\xbf")):
		// Some editors start UTF-8 files with a byte order mark; it says
		// nothing a JSON reader needs, so it is skipped, not refused.
		data = data[3:]
	case bytes.HasPrefix(data, []byte("\xfe\xff")), bytes.HasPrefix(data, []byte("\xff\xfe")),
		len(data) >= 2 && (data[0] == 0 || data[1] == 0):
		return nil, &DecodeError{Line: 1, Column: 1, Syntax: true,
			Problem: "the document is UTF-16 or UTF-32, and infra reads UTF-8: save it as UTF-8"}
	}
	r := &reader{data: data}
	return r.document()
}

// decodeOne reads data as one value with read, the whole of data: the
// UnmarshalJSON of a part of the document read on its own.
func decodeOne(data []byte, read func(r *reader) error) error {
	r := &reader{data: data}
	if err := read(r); err != nil {
		return err
	}
	r.space()
	if r.i < len(r.data) {
		return r.fail(r.i, true, nil, "unexpected %s after the value", r.found())
	}
	return nil
}

// quoted writes a key or value of the document in an error, printable.
func quoted(s string) string { return `"` + Printable(s) + `"` }
