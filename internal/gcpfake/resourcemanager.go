package gcpfake

import (
	"encoding/json"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// Cloud Resource Manager v3: projects.get, what a driver asks to turn a
// project id into the number other APIs' names carry; projects.getIamPolicy
// and projects.setIamPolicy, the project's IAM policy.
//
// The policy, as GCP keeps it: a new project's binds roles/owner to its
// creator and roles/editor to the Google APIs service agent; every write
// gets a new etag, and a set carrying an etag that is not the current one
// is ABORTED (HTTP 409: "There were concurrent policy changes"); a set
// without one overwrites. Bindings are normalised as GCP answers them
// (one per role and condition, members sorted and unique, empty ones
// dropped, roles in order); a role must be a role name; allUsers and
// allAuthenticatedUsers cannot be granted on a project; a service account
// of a project the fake holds must exist (deleted:… members are kept as
// they are). Conditions need version 3; the version answered is 3 when a
// binding has one, else 1. A policy with conditions read at a lower
// version answers UNIMPLEMENTED (GCP rewrites the roles), and no role's
// permissions are evaluated: a visible project allows everything.

func (s *Server) resourceManager() product {
	return product{api: "cloudresourcemanager", version: "v3", handlers: map[string]handler{
		"cloudresourcemanager.projects.get":          getProject,
		"cloudresourcemanager.projects.getIamPolicy": getProjectPolicy,
		"cloudresourcemanager.projects.setIamPolicy": setProjectPolicy,
	}}
}

// getProject answers for projects/ID or projects/NUMBER alike, with the
// number in name, as GCP does. The check before it has refused a project
// the caller may not see.
func getProject(c *call) (any, error) {
	id := c.project
	num := c.s.number(id)
	return map[string]any{
		"name":        "projects/" + num,
		"projectId":   id,
		"state":       "ACTIVE",
		"displayName": id,
		"createTime":  c.s.started,
		"etag":        `W/"` + num + `"`,
	}, nil
}

// projectPolicy is one project's IAM policy.
type projectPolicy struct {
	bindings     []policyBinding
	auditConfigs []any
	etag         string
}

type policyBinding struct {
	role      string
	members   []string
	condition map[string]any
}

// policy is the path's project's policy, made as a new project's on
// first use. The caller holds s.mu.
func (c *call) policy() *projectPolicy {
	st := c.s.regIAM()
	p := st.policies[c.project]
	if p == nil {
		p = &projectPolicy{etag: iamEtag(), bindings: []policyBinding{
			{role: "roles/editor", members: []string{"serviceAccount:" + c.s.number(c.project) + "@cloudservices.gserviceaccount.com"}},
			{role: "roles/owner", members: []string{"user:owner@example.com"}},
		}}
		st.policies[c.project] = p
	}
	return p
}

func (p *projectPolicy) conditional() bool {
	return slices.ContainsFunc(p.bindings, func(b policyBinding) bool { return b.condition != nil })
}

// answer is the Policy as the API answers it.
func (p *projectPolicy) answer() map[string]any {
	version := 1
	if p.conditional() {
		version = 3
	}
	out := map[string]any{"version": version, "etag": p.etag}
	for _, b := range p.bindings {
		members := make([]any, len(b.members))
		for i, m := range b.members {
			members[i] = m
		}
		jb := map[string]any{"role": b.role, "members": members}
		if b.condition != nil {
			jb["condition"] = b.condition
		}
		appendItem(out, "bindings", jb)
	}
	if len(p.auditConfigs) > 0 {
		out["auditConfigs"] = p.auditConfigs
	}
	return out
}

// rename replaces a member in every binding (an account deleted).
func (p *projectPolicy) rename(from, to string) {
	for i, b := range p.bindings {
		if j := slices.Index(b.members, from); j >= 0 {
			b.members[j] = to
			slices.Sort(b.members)
			p.bindings[i].members = slices.Compact(b.members)
		}
	}
}

func getProjectPolicy(c *call) (any, error) {
	opts, _ := c.body["options"].(map[string]any)
	v := 0
	if x, ok := opts["requestedPolicyVersion"]; ok {
		v, _ = strconv.Atoi(toString(x))
	}
	if v != 0 && v != 1 && v != 3 {
		return nil, invalid("Invalid requested policy version %d: want 1 or 3.", v)
	}
	p := c.policy()
	if p.conditional() && v < 3 {
		return nil, unmodelled("reading a policy with conditions at version %d", v)
	}
	return p.answer(), nil
}

func setProjectPolicy(c *call) (any, error) {
	sent, _ := c.body["policy"].(map[string]any)
	if sent == nil {
		return nil, invalid("policy is required.")
	}
	p := c.policy()
	if etag, _ := sent["etag"].(string); etag != "" && etag != p.etag {
		return nil, errorf("ABORTED", "There were concurrent policy changes. Please retry the whole read-modify-write with exponential backoff.")
	}
	paths, err := setPolicyMask(c.body["updateMask"])
	if err != nil {
		return nil, err
	}
	next := *p
	if slices.Contains(paths, "bindings") {
		if next.bindings, err = c.readPolicyBindings(sent["bindings"]); err != nil {
			return nil, err
		}
	}
	if slices.Contains(paths, "auditConfigs") {
		next.auditConfigs, _ = sent["auditConfigs"].([]any)
	}
	if version, _ := strconv.Atoi(toString(sent["version"])); next.conditional() && version != 3 {
		return nil, invalid("A policy with conditions must be of version 3, not %d.", version)
	}
	next.etag = iamEtag()
	*p = next
	return p.answer(), nil
}

// setPolicyMask is setIamPolicy's updateMask; GCP's default is bindings and
// etag.
func setPolicyMask(v any) ([]string, error) {
	mask, _ := v.(string)
	if mask == "" {
		mask = "bindings,etag"
	}
	var out []string
	for _, p := range strings.Split(mask, ",") {
		p = lowerCamel(p)
		if p != "bindings" && p != "etag" && p != "auditConfigs" {
			return nil, invalid("Invalid update mask path %q: want bindings, etag or auditConfigs.", p)
		}
		out = append(out, p)
	}
	return out, nil
}

var roleNameRE = regexp.MustCompile(`^(roles/[A-Za-z0-9_.]+|(projects|organizations)/[^/]+/roles/[A-Za-z0-9_.]+)$`)

// readPolicyBindings checks the sent bindings and normalises them.
func (c *call) readPolicyBindings(v any) ([]policyBinding, error) {
	list, _ := v.([]any)
	merged := map[string]*policyBinding{}
	for _, x := range list {
		b, _ := x.(map[string]any)
		role, _ := b["role"].(string)
		if !roleNameRE.MatchString(role) {
			return nil, invalid("Role %q is not a role name (roles/…, projects/…/roles/…).", role)
		}
		cond, _ := b["condition"].(map[string]any)
		if cond != nil && cond["expression"] == nil {
			return nil, invalid("The condition of a %s binding has no expression.", role)
		}
		condKey, _ := json.Marshal(cond)
		key := role + " " + string(condKey)
		if merged[key] == nil {
			merged[key] = &policyBinding{role: role, condition: cond}
		}
		members, _ := b["members"].([]any)
		for _, m := range members {
			s, _ := m.(string)
			if err := c.checkPolicyMember(s); err != nil {
				return nil, err
			}
			merged[key].members = append(merged[key].members, s)
		}
	}
	var out []policyBinding
	for _, key := range sortedKeys(merged) {
		b := merged[key]
		slices.Sort(b.members)
		if b.members = slices.Compact(b.members); len(b.members) > 0 {
			out = append(out, *b)
		}
	}
	return out, nil
}

var policyMemberPrefixes = []string{"user:", "group:", "domain:", "serviceAccount:", "principal:", "principalSet:",
	"deleted:user:", "deleted:group:", "deleted:serviceAccount:"}

// checkPolicyMember holds a member to the forms a project policy takes.
func (c *call) checkPolicyMember(m string) error {
	if m == "allUsers" || m == "allAuthenticatedUsers" {
		return invalid("%s cannot be granted a role on a project.", m)
	}
	if !slices.ContainsFunc(policyMemberPrefixes, func(p string) bool { return strings.HasPrefix(m, p) && len(m) > len(p) }) {
		return invalid("Invalid member %q: want user:, group:, domain:, serviceAccount: (or deleted:…) and an identity.", m)
	}
	email, ok := strings.CutPrefix(m, "serviceAccount:")
	if !ok {
		return nil
	}
	user, domain, _ := strings.Cut(email, "@")
	project, ours := strings.CutSuffix(domain, ".iam.gserviceaccount.com")
	if user != "" && ours && c.s.visible(project) && !c.s.accountExists(email) {
		return invalid("Service account %s does not exist.", email)
	}
	return nil
}
