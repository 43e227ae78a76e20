package state

import (
	"strings"
	"testing"
)

// valueInputs is additive: a ledger an older build wrote reads with no
// fingerprints, and a row without them is written exactly as before; a
// row with them keeps them.
func TestValueInputsAreAdditive(t *testing.T) {
	old := `{"version": 1, "rows": [{"provider": "aws", "kind": "secrets", "name": "db-url", "region": "eu-west-3"}]}`
	l, err := DecodeLedger([]byte(old))
	if err != nil {
		t.Fatal(err)
	}
	if !l.Rows[0].ValueInputs.IsZero() {
		t.Fatalf("an old row read as %+v", l.Rows[0].ValueInputs)
	}
	b, err := EncodeLedger(l)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), "valueInputs") {
		t.Fatalf("a row without inputs is written with them:\n%s", b)
	}
	l.Rows[0].ValueInputs = ValueInputs{Sources: "sha256:aa", Values: "sha256:bb"}
	if b, err = EncodeLedger(l); err != nil {
		t.Fatal(err)
	}
	back, err := DecodeLedger(b)
	if err != nil {
		t.Fatal(err)
	}
	if back.Rows[0] != l.Rows[0] || !strings.Contains(string(b), `"valueInputs": {`) {
		t.Fatalf("round trip: %+v from\n%s", back.Rows[0], b)
	}
}
