package spec

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"sort"
	"strconv"
)

// policyEqual compares two JSON documents under ComparePolicy. ok is false when
// either is not a string holding one JSON value, which then compares
// exactly.
func policyEqual(a, b any) (equal, ok bool) {
	sa, okA := a.(string)
	sb, okB := b.(string)
	if !okA || !okB {
		return false, false
	}
	na, errA := canonPolicy(sa)
	nb, errB := canonPolicy(sb)
	if errA != nil || errB != nil {
		return false, false
	}
	return na == nb, true
}

// canonPolicy is doc's normal form under ComparePolicy, as JSON text: equal
// texts mean equal documents.
func canonPolicy(doc string) (string, error) {
	dec := json.NewDecoder(bytes.NewReader([]byte(doc)))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return "", err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return "", errors.New("more than one JSON value")
	}
	out, err := json.Marshal(policyNormal(v))
	return string(out), err
}

// policyNormal rewrites a decoded document so that documents IAM reads
// alike are equal: a list of one is its value, a longer list is sorted (a
// set), numbers and booleans are their text. Objects keep their keys;
// json.Marshal writes them sorted.
func policyNormal(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, y := range x {
			out[k] = policyNormal(y)
		}
		return out
	case []any:
		if len(x) == 1 {
			return policyNormal(x[0])
		}
		items := make([]string, len(x))
		for i, y := range x {
			b, _ := json.Marshal(policyNormal(y))
			items[i] = string(b)
		}
		sort.Strings(items)
		out := make([]any, len(items))
		for i, s := range items {
			out[i] = json.RawMessage(s)
		}
		return out
	case json.Number:
		return x.String()
	case bool:
		return strconv.FormatBool(x)
	}
	return v
}
