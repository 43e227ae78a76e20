package providers

import (
	"github.com/infra-iac/infra/spec"
)

// EncodeMarkDescription writes a target's user tags and the ownership mark
// for t.Owner as a description (spec.EncodeMarkDescription). The caller
// holds the result to its product's limit (spec.DescriptionLimit).
func EncodeMarkDescription(t Target) (string, error) {
	tags, err := FieldStringMap(t.Fields, spec.TagsField)
	if err != nil {
		return "", err
	}
	return spec.EncodeMarkDescription(t.Owner, tags), nil
}

// DecodeMarkDescription reads a description EncodeMarkDescription wrote,
// its tags as a reported tags field: the tags, the mark among them, and
// the owner the mark names. Free text gives ok false: it is unmarked.
func DecodeMarkDescription(s string) (tags map[string]any, owner string, ok bool) {
	m, owner, ok := spec.DecodeMarkDescription(s)
	if !ok {
		return nil, "", false
	}
	tags = make(map[string]any, len(m))
	for k, v := range m {
		tags[k] = v
	}
	return tags, owner, true
}
