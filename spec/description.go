package spec

import (
	"net/url"
	"strings"
)

// EncodeMarkDescription writes tags and the ownership mark for owner as
// the description of a product whose only free field it is (MarkDescription:
// a Scaleway registry namespace, a GCP service account): a query string,
// "managed-by-infra=shop&team=web". No tag can replace the mark. Check
// holds the result to the product's DescriptionLimit, and so does the
// driver.
func EncodeMarkDescription(owner string, tags map[string]string) string {
	v := url.Values{}
	for k, x := range tags {
		if k != OwnershipTagKey {
			v.Set(k, x)
		}
	}
	if owner != "" {
		v.Set(OwnershipTagKey, owner)
	}
	return v.Encode()
}

// DecodeMarkDescription reads a description EncodeMarkDescription wrote:
// the tags, the mark among them, and the owner the mark names. A
// description that is not one (free text) gives ok false: it is unmarked.
func DecodeMarkDescription(s string) (tags map[string]string, owner string, ok bool) {
	v, err := url.ParseQuery(s)
	if err != nil || (s != "" && !strings.Contains(s, "=")) {
		return nil, "", false
	}
	tags = make(map[string]string, len(v))
	for k := range v {
		tags[k] = v.Get(k)
	}
	return tags, v.Get(OwnershipTagKey), true
}
