package gcpfake

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Secret Manager v1, global secrets (projects/*/secrets/*): secrets
// create, get, list, patch, delete; versions add, get, list, access,
// enable, disable, destroy. As the API does, names in answers carry the
// project number (projects/123456789012/secrets/s), requests may use the
// id or the number, lists come newest first, etags are quoted strings
// that change on every modification (a version's apart from its
// secret's), and an etag that does not match is FAILED_PRECONDITION
// (HTTP 400). Regional secrets (projects/*/locations/*/secrets) and IAM
// policies answer UNIMPLEMENTED.

func (s *Server) secretManager() product {
	const p = "secretmanager.projects.secrets."
	return product{api: "secretmanager", version: "v1", handlers: map[string]handler{
		p + "create":           createSecret,
		p + "get":              getSecret,
		p + "list":             listSecrets,
		p + "patch":            patchSecret,
		p + "delete":           deleteSecret,
		p + "addVersion":       addVersion,
		p + "versions.get":     getVersion,
		p + "versions.list":    listVersions,
		p + "versions.access":  accessVersion,
		p + "versions.enable":  versionState("ENABLED"),
		p + "versions.disable": versionState("DISABLED"),
		p + "versions.destroy": destroyVersion,
	}}
}

// secret is one stored secret.
type secret struct {
	id string
	// fields is the Secret as the API answers it.
	fields   map[string]any
	versions []*version // version n at n-1
	seq      int        // creation order, for newest-first lists
}

// storedFields are the Secret fields kept as sent. The others are output
// only, the etag, or input only: ttl becomes expireTime, and tags bind at
// creation and never read back.
var storedFields = []string{"annotations", "customerManagedEncryption", "expireTime", "labels", "replication",
	"rotation", "secretType", "topics", "versionAliases", "versionDestroyTtl"}

// patchable are the update-mask paths modelled (lowerCamel, as the
// FieldMask's JSON form and the clients write them); ttl as well.
var patchable = []string{"annotations", "expireTime", "labels", "rotation", "topics", "versionAliases", "versionDestroyTtl"}

var secretIDRE = regexp.MustCompile(`^[A-Za-z0-9_-]{1,255}$`)

func (c *call) secretName(id string) string {
	return "projects/" + c.s.number(c.project) + "/secrets/" + id
}

func (c *call) secrets() map[string]*secret {
	m := c.s.secrets[c.project]
	if m == nil {
		m = map[string]*secret{}
		c.s.secrets[c.project] = m
	}
	return m
}

// secret is the path's secret, or NOT_FOUND.
func (c *call) secret() (*secret, error) {
	id := c.flat["secretsId"]
	if sec := c.secrets()[id]; sec != nil {
		return sec, nil
	}
	return nil, notFound("Secret [%s] not found.", c.secretName(id))
}

func createSecret(c *call) (any, error) {
	id := c.query.Get("secretId")
	if !secretIDRE.MatchString(id) {
		return nil, invalid("Secret ID [%s] must be 1 to 255 letters, digits, hyphens and underscores.", id)
	}
	if _, dup := c.secrets()[id]; dup {
		return nil, errorf("ALREADY_EXISTS", "Secret [%s] already exists.", c.secretName(id))
	}
	fields := map[string]any{}
	for _, k := range storedFields {
		setField(fields, k, c.body[k])
	}
	if err := c.expiration(fields, c.body); err != nil {
		return nil, err
	}
	if err := checkSecret(fields, nil); err != nil {
		return nil, err
	}
	c.s.seq++
	fields["name"] = c.secretName(id)
	fields["createTime"] = timestamp(c.s.now())
	fields["etag"] = newEtag()
	c.secrets()[id] = &secret{id: id, fields: fields, seq: c.s.seq}
	return fields, nil
}

// expiration applies the oneof expiration: ttl (input only) or
// expireTime, not both.
func (c *call) expiration(fields, body map[string]any) error {
	ttl, _ := body["ttl"].(string)
	if ttl == "" {
		return nil
	}
	if body["expireTime"] != nil {
		return invalid("Only one of ttl and expire_time may be set.")
	}
	d, err := time.ParseDuration(ttl)
	if err != nil || d <= 0 {
		return invalid("ttl %q must be a positive duration.", ttl)
	}
	fields["expireTime"] = timestamp(c.s.now().Add(d))
	return nil
}

// checkSecret holds a secret's fields to the rules the docs state:
// replication is required and one of automatic or userManaged with
// replicas, labels follow the label syntax, aliases name versions.
func checkSecret(fields map[string]any, versions []*version) error {
	rep, _ := fields["replication"].(map[string]any)
	auto, user := rep["automatic"] != nil, rep["userManaged"] != nil
	if auto == user {
		return invalid("Secret.replication must set exactly one of automatic and userManaged.")
	}
	if user {
		um, _ := rep["userManaged"].(map[string]any)
		replicas, _ := um["replicas"].([]any)
		if len(replicas) == 0 {
			return invalid("Secret.replication.userManaged.replicas must not be empty.")
		}
		for _, r := range replicas {
			if loc, _ := r.(map[string]any)["location"].(string); loc == "" {
				return invalid("Every replica needs a location.")
			}
		}
	}
	if err := checkLabels(fields["labels"]); err != nil {
		return err
	}
	return checkAliases(fields["versionAliases"], versions)
}

var (
	labelKeyRE   = regexp.MustCompile(`^[\p{Ll}\p{Lo}][\p{Ll}\p{Lo}\p{N}_-]{0,62}$`)
	labelValueRE = regexp.MustCompile(`^[\p{Ll}\p{Lo}\p{N}_-]{0,63}$`)
)

func checkLabels(v any) error {
	labels, _ := v.(map[string]any)
	if len(labels) > 64 {
		return invalid("A secret takes at most 64 labels, got %d.", len(labels))
	}
	for _, k := range sortedKeys(labels) {
		val, _ := labels[k].(string)
		if !labelKeyRE.MatchString(k) || !labelValueRE.MatchString(val) {
			return invalid("Label %q=%q: keys are a lowercase letter then up to 62 lowercase letters, digits, _ or -; values up to 63 of those.", k, val)
		}
	}
	return nil
}

func checkAliases(v any, versions []*version) error {
	aliases, _ := v.(map[string]any)
	for _, k := range sortedKeys(aliases) {
		n, _ := strconv.Atoi(fmt.Sprint(aliases[k]))
		if k == "latest" || k == "NEW" || n < 1 || n > len(versions) {
			return invalid("Version alias %q=%v must name an existing version and not be latest or NEW.", k, aliases[k])
		}
	}
	return nil
}

func getSecret(c *call) (any, error) {
	sec, err := c.secret()
	if err != nil {
		return nil, err
	}
	return sec.fields, nil
}

func listSecrets(c *call) (any, error) {
	terms, err := parseFilter(c.query.Get("filter"), secretFilterFields)
	if err != nil {
		return nil, err
	}
	var all []*secret
	for _, sec := range c.secrets() {
		if terms.match(sec.fields) {
			all = append(all, sec)
		}
	}
	slices.SortFunc(all, func(a, b *secret) int { return b.seq - a.seq })
	start, end, next, err := paginate(c, len(all))
	if err != nil {
		return nil, err
	}
	out := map[string]any{}
	for _, sec := range all[start:end] {
		appendItem(out, "secrets", sec.fields)
	}
	listFooter(out, next, len(all), terms)
	return out, nil
}

// listFooter sets nextPageToken and totalSize, which the API reports as 0
// (so omits) under a filter. Zero values are left out, as protojson
// leaves them out.
func listFooter(out map[string]any, next string, total int, terms filter) {
	if next != "" {
		out["nextPageToken"] = next
	}
	if len(terms) == 0 && total > 0 {
		out["totalSize"] = total
	}
}

func appendItem(out map[string]any, key string, item any) {
	items, _ := out[key].([]any)
	out[key] = append(items, item)
}

func patchSecret(c *call) (any, error) {
	sec, err := c.secret()
	if err != nil {
		return nil, err
	}
	mask := c.query.Get("updateMask")
	if mask == "" {
		return nil, invalid("update_mask is required.")
	}
	if etag, _ := c.body["etag"].(string); etag != "" && etag != sec.fields["etag"] {
		return nil, precondition("The etag %s does not match the secret's current etag.", etag)
	}
	fields := cloneJSON(sec.fields)
	for _, p := range strings.Split(mask, ",") {
		if err := c.patchPath(fields, lowerCamel(p)); err != nil {
			return nil, err
		}
	}
	if err := checkSecret(fields, sec.versions); err != nil {
		return nil, err
	}
	fields["etag"] = newEtag()
	sec.fields = fields
	return fields, nil
}

// patchPath applies one update-mask path: a modelled field is set from
// the body, or cleared when the body leaves it out; a field the API
// forbids updating or does not have is INVALID_ARGUMENT.
func (c *call) patchPath(fields map[string]any, path string) error {
	switch {
	case slices.Contains(patchable, path):
		delete(fields, path)
		setField(fields, path, c.body[path])
		return nil
	case path == "ttl":
		delete(fields, "expireTime")
		return c.expiration(fields, map[string]any{"ttl": c.body["ttl"]})
	case path == "customerManagedEncryption":
		return unmodelled("updating customerManagedEncryption")
	}
	secretSchema := c.m.doc.Schemas["Secret"]
	if p := secretSchema.Properties[path]; p != nil {
		return invalid("Secret.%s cannot be updated (output only or immutable).", path)
	}
	return invalid("Invalid update mask path %q: Secret has no such field.", path)
}

func deleteSecret(c *call) (any, error) {
	sec, err := c.secret()
	if err != nil {
		return nil, err
	}
	if etag := c.query.Get("etag"); etag != "" && etag != sec.fields["etag"] {
		return nil, precondition("The etag %s does not match the secret's current etag.", etag)
	}
	delete(c.secrets(), sec.id)
	return map[string]any{}, nil
}

// setField stores a JSON value unless it is unset or empty: protojson
// never writes an empty map, list or string.
func setField(m map[string]any, k string, v any) {
	switch x := v.(type) {
	case nil:
		return
	case string:
		if x == "" {
			return
		}
	case map[string]any:
		if len(x) == 0 {
			return
		}
	case []any:
		if len(x) == 0 {
			return
		}
	}
	m[k] = v
}

// lowerCamel reads an update-mask path in either spelling: the clients
// send lowerCamel (version_aliases travels as versionAliases), a
// hand-written request may use the proto's snake_case.
func lowerCamel(p string) string {
	parts := strings.Split(strings.TrimSpace(p), "_")
	for i := 1; i < len(parts); i++ {
		if parts[i] != "" {
			parts[i] = strings.ToUpper(parts[i][:1]) + parts[i][1:]
		}
	}
	return strings.Join(parts, "")
}

func cloneJSON(m map[string]any) map[string]any {
	b, _ := json.Marshal(m) // the fake's own JSON values always encode
	out, _ := decodeObject(b)
	return out
}

// timestamp is a google-datetime as the APIs write it: UTC, microseconds.
func timestamp(t time.Time) string {
	return t.UTC().Format("2006-01-02T15:04:05.000000Z")
}

// newEtag is quoted, as AIP-154 and Secret Manager's etags are: "\"6a1f…\"".
func newEtag() string { return `"` + randomHex(7) + `"` }
