package gcpfake

import (
	"crypto/rand"
	"encoding/base64"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// IAM v1, service accounts (projects.serviceAccounts create, get, list,
// patch, delete). As the API does: an account is named
// projects/<project id>/serviceAccounts/<email>, where the email is
// <accountId>@<project id>.iam.gserviceaccount.com, and may be asked for
// by email or by its unique id; the account id is 6–30 characters of
// [a-z0-9-] starting with a letter; the description holds at most 256
// bytes and the display name 100; a taken id is ALREADY_EXISTS; lists come
// in email order, 20 to a page unless asked (at most 100); a patch takes
// the account and an updateMask of displayName and description, and
// answers only the name, the etag and the fields it set ("Other fields may
// be empty in the response"). Deleting an account does not remove its
// role bindings: every one becomes deleted:serviceAccount:<email>?uid=<id>
// in the project's policy, as GCP leaves them. Keys, disabling, undelete,
// the "-" project wildcard and the account's own IAM policy answer
// UNIMPLEMENTED (or PERMISSION_DENIED, for "-").

func (s *Server) iamProduct() product {
	const p = "iam.projects.serviceAccounts."
	return product{api: "iam", version: "v1", handlers: map[string]handler{
		p + "create": createServiceAccount,
		p + "get":    getServiceAccount,
		p + "list":   listServiceAccounts,
		p + "patch":  patchServiceAccount,
		p + "delete": deleteServiceAccount,
	}}
}

// iamAccount is one service account: the ServiceAccount as the API
// answers it.
type iamAccount struct {
	id     string
	fields map[string]any
}

var accountIDRE = regexp.MustCompile(`^[a-z][a-z0-9-]{4,28}[a-z0-9]$`)

const (
	iamDescriptionLimit = 256
	iamDisplayNameLimit = 100
	// iamMaxPageSize and iamDefaultPageSize are the API's documented page
	// sizes.
	iamMaxPageSize     = 100
	iamDefaultPageSize = 20
)

func (c *call) accounts() map[string]*iamAccount {
	st := c.s.regIAM()
	m := st.accounts[c.project]
	if m == nil {
		m = map[string]*iamAccount{}
		st.accounts[c.project] = m
	}
	return m
}

// account is the path's account, by email or unique id, or NOT_FOUND.
func (c *call) account() (*iamAccount, error) {
	key := c.flat["serviceAccountsId"]
	for _, a := range c.accounts() {
		if a.fields["email"] == key || a.fields["uniqueId"] == key {
			return a, nil
		}
	}
	return nil, notFound("Unknown service account")
}

func createServiceAccount(c *call) (any, error) {
	id, _ := c.body["accountId"].(string)
	if !accountIDRE.MatchString(id) {
		return nil, invalid("Invalid account id %q: it must be 6 to 30 characters, start with a lowercase letter and hold lowercase letters, digits and hyphens, not ending with a hyphen.", id)
	}
	if c.accounts()[id] != nil {
		return nil, errorf("ALREADY_EXISTS", "Service account %s already exists within project projects/%s.", id, c.project)
	}
	sent, _ := c.body["serviceAccount"].(map[string]any)
	fields := map[string]any{}
	// Only the display name and the description are the caller's to set.
	setField(fields, "displayName", sent["displayName"])
	setField(fields, "description", sent["description"])
	if err := checkServiceAccount(fields); err != nil {
		return nil, err
	}
	email := id + "@" + c.project + ".iam.gserviceaccount.com"
	unique := randomDigits(21)
	fields["name"] = "projects/" + c.project + "/serviceAccounts/" + email
	fields["projectId"] = c.project
	fields["uniqueId"] = unique
	fields["oauth2ClientId"] = unique
	fields["email"] = email
	fields["etag"] = iamEtag()
	c.accounts()[id] = &iamAccount{id: id, fields: fields}
	return fields, nil
}

func checkServiceAccount(fields map[string]any) error {
	if d, _ := fields["description"].(string); len(d) > iamDescriptionLimit {
		return invalid("The description is %d bytes; at most %d are allowed.", len(d), iamDescriptionLimit)
	}
	if d, _ := fields["displayName"].(string); len(d) > iamDisplayNameLimit {
		return invalid("The display name is %d bytes; at most %d are allowed.", len(d), iamDisplayNameLimit)
	}
	return nil
}

func getServiceAccount(c *call) (any, error) {
	a, err := c.account()
	if err != nil {
		return nil, err
	}
	return a.fields, nil
}

func listServiceAccounts(c *call) (any, error) {
	var all []*iamAccount
	for _, a := range c.accounts() {
		all = append(all, a)
	}
	slices.SortFunc(all, func(a, b *iamAccount) int {
		return strings.Compare(a.fields["email"].(string), b.fields["email"].(string))
	})
	if c.query.Get("pageSize") == "" || c.query.Get("pageSize") == "0" {
		c.query.Set("pageSize", strconv.Itoa(iamDefaultPageSize))
	}
	capPageSize(c, iamMaxPageSize)
	start, end, next, err := paginate(c, len(all))
	if err != nil {
		return nil, err
	}
	out := map[string]any{}
	for _, a := range all[start:end] {
		appendItem(out, "accounts", a.fields)
	}
	if next != "" {
		out["nextPageToken"] = next
	}
	return out, nil
}

func patchServiceAccount(c *call) (any, error) {
	a, err := c.account()
	if err != nil {
		return nil, err
	}
	mask, _ := c.body["updateMask"].(string)
	if mask == "" {
		return nil, invalid("update_mask is required.")
	}
	sent, _ := c.body["serviceAccount"].(map[string]any)
	fields := cloneJSON(a.fields)
	answer := map[string]any{"name": a.fields["name"]}
	for _, p := range strings.Split(mask, ",") {
		p = lowerCamel(p)
		if p != "displayName" && p != "description" {
			return nil, invalid("Invalid update mask path %q: only displayName and description can be patched.", p)
		}
		delete(fields, p)
		setField(fields, p, sent[p])
		setField(answer, p, sent[p])
	}
	if err := checkServiceAccount(fields); err != nil {
		return nil, err
	}
	fields["etag"] = iamEtag()
	answer["etag"] = fields["etag"]
	a.fields = fields
	return answer, nil
}

func deleteServiceAccount(c *call) (any, error) {
	a, err := c.account()
	if err != nil {
		return nil, err
	}
	delete(c.accounts(), a.id)
	// GCP keeps the account's bindings, marked deleted, until someone
	// removes them.
	member := "serviceAccount:" + a.fields["email"].(string)
	c.policy().rename(member, "deleted:"+member+"?uid="+a.fields["uniqueId"].(string))
	return map[string]any{}, nil
}

// accountExists reports whether email names an account the fake holds,
// for the project policy's member check. The caller holds s.mu.
func (s *Server) accountExists(email string) bool {
	for _, m := range s.regIAM().accounts {
		for _, a := range m {
			if a.fields["email"] == email {
				return true
			}
		}
	}
	return false
}

// iamEtag is an etag of format byte, as IAM's are: base64.
func iamEtag() string {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return base64.StdEncoding.EncodeToString(b)
}
