package providers

import (
	"net/url"
	"strings"

	"github.com/infra-iac/infra/spec"
)

// EncodeMarkDescription writes a target's user tags and the ownership mark
// for t.Owner as a description, for a product whose only free field it is
// (a Scaleway registry namespace, a GCP service account): a query string,
// "managed-by-infra=shop&team=web". No user tag can replace the mark. The
// caller holds the result to its product's length limit.
func EncodeMarkDescription(t Target) (string, error) {
	tags, err := FieldStringMap(t.Fields, spec.TagsField)
	if err != nil {
		return "", err
	}
	v := url.Values{}
	for k, x := range tags {
		if k != spec.OwnershipTagKey {
			v.Set(k, x)
		}
	}
	if t.Owner != "" {
		v.Set(spec.OwnershipTagKey, t.Owner)
	}
	return v.Encode(), nil
}

// DecodeMarkDescription reads a description EncodeMarkDescription wrote:
// the tags, the mark among them, and the owner the mark names. A
// description that is not one (free text) gives ok false: it is unmarked.
func DecodeMarkDescription(s string) (tags map[string]any, owner string, ok bool) {
	v, err := url.ParseQuery(s)
	if err != nil || (s != "" && !strings.Contains(s, "=")) {
		return nil, "", false
	}
	tags = make(map[string]any, len(v))
	for k := range v {
		tags[k] = v.Get(k)
	}
	return tags, v.Get(spec.OwnershipTagKey), true
}
