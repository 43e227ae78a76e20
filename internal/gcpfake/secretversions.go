package gcpfake

import (
	"encoding/base64"
	"hash/crc32"
	"slices"
	"strconv"
	"time"
)

// version is one secret version.
type version struct {
	n         int
	state     string // ENABLED, DISABLED, DESTROYED
	data      []byte // nil once destroyed
	crc       uint32
	clientCRC bool // the caller sent dataCrc32c
	created   string
	destroyed string
	scheduled string // scheduledDestroyTime, under a versionDestroyTtl
	etag      string
}

// maxPayload is the API's limit on a version's data.
const maxPayload = 64 << 10

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

func addVersion(c *call) (any, error) {
	sec, err := c.secret()
	if err != nil {
		return nil, err
	}
	payload, _ := c.body["payload"].(map[string]any)
	if payload == nil {
		return nil, invalid("payload is required.")
	}
	data, err := decodeBytes(payload["data"])
	if err != nil {
		return nil, invalid("payload.data: %v", err)
	}
	if len(data) > maxPayload {
		return nil, invalid("Secret payload of %d bytes exceeds the 65536-byte limit.", len(data))
	}
	v := &version{n: len(sec.versions) + 1, state: "ENABLED", data: data,
		crc: crc32.Checksum(data, castagnoli), created: timestamp(c.s.now()), etag: newEtag()}
	if sent, ok := payload["dataCrc32c"]; ok && sent != nil {
		n, err := strconv.ParseUint(toString(sent), 10, 64)
		if err != nil || n != uint64(v.crc) {
			return nil, invalid("Checksum mismatch: payload.data_crc32c %v is not the CRC32C of the data.", sent)
		}
		v.clientCRC = true
	}
	sec.versions = append(sec.versions, v)
	return c.versionJSON(sec, v), nil
}

// decodeBytes reads a format-byte field, in any alphabet protojson reads.
func decodeBytes(v any) ([]byte, error) {
	s, _ := v.(string)
	var err error
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding, base64.RawStdEncoding, base64.RawURLEncoding} {
		var b []byte
		if b, err = enc.DecodeString(s); err == nil {
			return b, nil
		}
	}
	return nil, err
}

func toString(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	text, _ := numberText(v)
	return text
}

func (c *call) versionName(sec *secret, n int) string {
	return c.secretName(sec.id) + "/versions/" + strconv.Itoa(n)
}

// versionJSON is a SecretVersion as the API answers it; replicationStatus
// mirrors the secret's replication.
func (c *call) versionJSON(sec *secret, v *version) map[string]any {
	out := map[string]any{
		"name":       c.versionName(sec, v.n),
		"createTime": v.created,
		"state":      v.state,
		"etag":       v.etag,
	}
	rep, _ := sec.fields["replication"].(map[string]any)
	if um, ok := rep["userManaged"].(map[string]any); ok {
		var replicas []any
		for _, r := range um["replicas"].([]any) {
			replicas = append(replicas, map[string]any{"location": r.(map[string]any)["location"]})
		}
		out["replicationStatus"] = map[string]any{"userManaged": map[string]any{"replicas": replicas}}
	} else {
		out["replicationStatus"] = map[string]any{"automatic": map[string]any{}}
	}
	if v.clientCRC {
		out["clientSpecifiedPayloadChecksum"] = true
	}
	setField(out, "destroyTime", v.destroyed)
	setField(out, "scheduledDestroyTime", v.scheduled)
	return out
}

// version resolves the path's version: a number, latest (the most
// recently created, whatever its state) or an alias of versionAliases.
func (c *call) version(sec *secret) (*version, error) {
	id := c.flat["versionsId"]
	if id == "latest" {
		if len(sec.versions) == 0 {
			return nil, notFound("Secret [%s] not found or has no versions.", c.secretName(sec.id))
		}
		return sec.versions[len(sec.versions)-1], nil
	}
	if aliases, _ := sec.fields["versionAliases"].(map[string]any); aliases[id] != nil {
		id = toString(aliases[id])
	}
	n, err := strconv.Atoi(id)
	if err != nil || n < 1 || n > len(sec.versions) {
		return nil, notFound("Secret Version [%s/versions/%s] not found.", c.secretName(sec.id), c.flat["versionsId"])
	}
	return sec.versions[n-1], nil
}

// secretVersion is the path's secret and version.
func (c *call) secretVersion() (*secret, *version, error) {
	sec, err := c.secret()
	if err != nil {
		return nil, nil, err
	}
	v, err := c.version(sec)
	return sec, v, err
}

func getVersion(c *call) (any, error) {
	sec, v, err := c.secretVersion()
	if err != nil {
		return nil, err
	}
	return c.versionJSON(sec, v), nil
}

func accessVersion(c *call) (any, error) {
	sec, v, err := c.secretVersion()
	if err != nil {
		return nil, err
	}
	if v.state != "ENABLED" {
		return nil, precondition("Secret Version [%s] is in %s state.", c.versionName(sec, v.n), v.state)
	}
	return map[string]any{
		"name": c.versionName(sec, v.n),
		"payload": map[string]any{
			"data":       base64.StdEncoding.EncodeToString(v.data),
			"dataCrc32c": strconv.FormatUint(uint64(v.crc), 10),
		},
	}, nil
}

func listVersions(c *call) (any, error) {
	sec, err := c.secret()
	if err != nil {
		return nil, err
	}
	terms, err := parseFilter(c.query.Get("filter"), versionFilterFields)
	if err != nil {
		return nil, err
	}
	var all []map[string]any
	for _, v := range slices.Backward(sec.versions) {
		if j := c.versionJSON(sec, v); terms.match(j) {
			all = append(all, j)
		}
	}
	start, end, next, err := paginate(c, len(all))
	if err != nil {
		return nil, err
	}
	out := map[string]any{}
	for _, j := range all[start:end] {
		appendItem(out, "versions", j)
	}
	listFooter(out, next, len(all), terms)
	return out, nil
}

// versionState enables or disables a version; a destroyed one stays
// destroyed. A no-op still takes a new etag, as the docs say.
func versionState(state string) handler {
	return func(c *call) (any, error) {
		sec, v, err := c.mutableVersion()
		if err != nil {
			return nil, err
		}
		v.state, v.etag = state, newEtag()
		return c.versionJSON(sec, v), nil
	}
}

// destroyVersion wipes the data, or, under the secret's
// versionDestroyTtl, disables the version and schedules the destruction
// (which the fake never carries out: no clock runs).
func destroyVersion(c *call) (any, error) {
	sec, v, err := c.mutableVersion()
	if err != nil {
		return nil, err
	}
	v.etag = newEtag()
	if ttl, _ := sec.fields["versionDestroyTtl"].(string); ttl != "" {
		d, _ := time.ParseDuration(ttl) // checked as google-duration
		v.state, v.scheduled = "DISABLED", timestamp(c.s.now().Add(d))
		return c.versionJSON(sec, v), nil
	}
	v.state, v.data, v.destroyed = "DESTROYED", nil, timestamp(c.s.now())
	return c.versionJSON(sec, v), nil
}

// mutableVersion is the path's version if it may change: not destroyed,
// and the body's etag, if any, current.
func (c *call) mutableVersion() (*secret, *version, error) {
	sec, v, err := c.secretVersion()
	if err != nil {
		return nil, nil, err
	}
	if etag, _ := c.body["etag"].(string); etag != "" && etag != v.etag {
		return nil, nil, precondition("The etag %s does not match the version's current etag.", etag)
	}
	if v.state == "DESTROYED" {
		return nil, nil, precondition("Secret Version [%s] is in DESTROYED state.", c.versionName(sec, v.n))
	}
	return sec, v, nil
}
