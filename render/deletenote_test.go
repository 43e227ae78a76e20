package render

import (
	"strings"
	"testing"

	"github.com/infra-iac/infra/engine"
	"github.com/infra-iac/infra/spec"
)

// A kind whose delete is not what the word says (a KMS key is scheduled
// for deletion) has its note beside each delete and replace of it, in the
// text plan and in the PR comment; other kinds' rows are as before.
func TestDeleteNoteIsShownBesideDeletesOfItsKind(t *testing.T) {
	info, _ := spec.Lookup(spec.KMSKey)
	note := info.DeleteNote
	if !strings.Contains(note, "cancel-key-deletion") {
		t.Fatalf("kms-key's delete note %q does not say how to undo it", note)
	}
	key := spec.Address{Provider: spec.AWS, Kind: spec.KMSKey, Name: "data"}
	p := &engine.Plan{FormatVersion: engine.FormatVersion, Fleet: "shop",
		Accounts: []engine.Account{{Provider: spec.AWS, Account: "123456789012", Regions: []string{"eu-west-3"}}},
		Actions: []engine.Action{
			{Address: key, Action: engine.Delete, Reason: "no longer declared"},
			{Address: spec.Address{Provider: spec.AWS, Kind: spec.KMSKey, Name: "signing"}, Action: engine.Replace, Order: engine.DeleteFirst,
				Changes: []engine.Change{{Field: "keySpec", Before: "RSA_2048", After: "RSA_4096", ForcesReplacement: true}}},
			{Address: spec.Address{Provider: spec.AWS, Kind: spec.KMSKey, Name: "other"}, Action: engine.Update,
				Changes: []engine.Change{{Field: "description", Before: "a", After: "b"}}},
			{Address: spec.Address{Provider: spec.AWS, Kind: spec.Queues, Name: "jobs"}, Action: engine.Delete, Reason: "no longer declared"},
		}}
	p.Summarize()
	var text strings.Builder
	if err := Text(&text, p, TextOptions{}); err != nil {
		t.Fatal(err)
	}
	md := Markdown(p, MarkdownOptions{})
	for name, out := range map[string]string{"text": text.String(), "markdown": md} {
		lines := strings.Split(out, "\n")
		for _, want := range []string{"aws/kms-key/data", "aws/kms-key/signing"} {
			if !lineWith(lines, want, note) {
				t.Errorf("%s: no line shows %s with the note %q:\n%s", name, want, note, out)
			}
		}
		for _, not := range []string{"aws/kms-key/other", "aws/queues/jobs"} {
			if lineWith(lines, not, note) {
				t.Errorf("%s: %s, not a delete of a kind with a note, shows it:\n%s", name, not, out)
			}
		}
	}
}

func lineWith(lines []string, a, b string) bool {
	for _, l := range lines {
		if strings.Contains(l, a) && strings.Contains(l, b) {
			return true
		}
	}
	return false
}
