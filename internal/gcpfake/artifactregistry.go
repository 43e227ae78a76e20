package gcpfake

import (
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// Artifact Registry v1, standard repositories: repositories create and
// delete (long-running operations, done at once unless a test asks
// otherwise), get, list, patch (updateMask); packages list, seeded by
// tests (nothing can push an image); operations get. As the API does,
// names carry the project id (projects/p/locations/l/repositories/r),
// a repository has no etag, a docker repository reports its registryUri
// (<location>-docker.pkg.dev/<project>/<id>), labels follow GCP's label
// syntax, a taken id is ALREADY_EXISTS and a missing one NOT_FOUND
// ("Requested entity was not found."). An operation's response is the
// Any the GAPIC client decodes: the message's fields under "@type".
// Remote, virtual and Maven settings, vulnerability scanning, filters and
// orderings answer UNIMPLEMENTED.

func (s *Server) artifactRegistry() product {
	const p = "artifactregistry.projects.locations."
	return product{api: "artifactregistry", version: "v1", handlers: map[string]handler{
		p + "repositories.create":        createRepository,
		p + "repositories.get":           getRepository,
		p + "repositories.list":          listRepositories,
		p + "repositories.patch":         patchRepository,
		p + "repositories.delete":        deleteRepository,
		p + "repositories.packages.list": listPackages,
		p + "operations.get":             getAROperation,
	}}
}

// arRepo is one repository: the Repository as the API answers it.
type arRepo struct {
	fields map[string]any
}

const (
	arRepositoryType = "type.googleapis.com/google.devtools.artifactregistry.v1.Repository"
	arEmptyType      = "type.googleapis.com/google.protobuf.Empty"
	// arMaxPageSize is the documented cap on pageSize; it is also the page
	// the fake answers when the caller leaves the size to the server.
	arMaxPageSize = 1000
)

// arStored are the Repository fields kept as sent; the others are output
// only, or unmodelled (arUnmodelled).
var arStored = []string{"cleanupPolicies", "cleanupPolicyDryRun", "description", "dockerConfig", "format", "kmsKeyName", "labels", "mode"}

var arUnmodelled = []string{"mavenConfig", "remoteRepositoryConfig", "virtualRepositoryConfig", "vulnerabilityScanningConfig", "platformLogsConfig"}

// arPatchable are the update-mask paths modelled.
var arPatchable = []string{"cleanupPolicies", "cleanupPolicyDryRun", "description", "dockerConfig", "dockerConfig.immutableTags", "labels"}

var (
	repositoryIDRE = regexp.MustCompile(`^[a-z]([a-z0-9-]{0,61}[a-z0-9])?$`)
	// arLocationRE is a region (europe-west9) or a multi-region (europe).
	arLocationRE = regexp.MustCompile(`^[a-z]+(-[a-z]+[0-9]+)?$`)
)

func (c *call) repositoryName(location, id string) string {
	return "projects/" + c.project + "/locations/" + location + "/repositories/" + id
}

// repository is the path's repository, or NOT_FOUND.
func (c *call) repository() (*arRepo, string, error) {
	name := c.repositoryName(c.flat["locationsId"], c.flat["repositoriesId"])
	if r := c.s.regIAM().repos[name]; r != nil {
		return r, name, nil
	}
	return nil, name, notFound("Requested entity was not found.")
}

func createRepository(c *call) (any, error) {
	loc, id := c.flat["locationsId"], c.query.Get("repositoryId")
	if !arLocationRE.MatchString(loc) {
		return nil, invalid("Location %q is not a valid location.", loc)
	}
	if !repositoryIDRE.MatchString(id) {
		return nil, invalid("Invalid repository id %q: it must start with a lowercase letter, end with a letter or number, hold only lowercase letters, numbers and hyphens, and be at most 63 characters.", id)
	}
	name := c.repositoryName(loc, id)
	st := c.s.regIAM()
	if st.repos[name] != nil {
		return nil, errorf("ALREADY_EXISTS", "the repository already exists")
	}
	fields, err := c.newRepository(loc, id)
	if err != nil {
		return nil, err
	}
	st.repos[name] = &arRepo{fields: fields}
	resp := cloneJSON(fields)
	resp["@type"] = arRepositoryType
	return c.startAROperation(loc, resp), nil
}

// newRepository is the Repository the create body asks for, checked.
func (c *call) newRepository(loc, id string) (map[string]any, error) {
	for _, k := range arUnmodelled {
		if c.body[k] != nil {
			return nil, unmodelled("Repository.%s", k)
		}
	}
	fields := map[string]any{}
	for _, k := range arStored {
		setField(fields, k, c.body[k])
	}
	if m, _ := fields["mode"].(string); m == "" || m == "MODE_UNSPECIFIED" {
		if c.body["disallowUnspecifiedMode"] == true {
			return nil, invalid("Repository mode must be specified.")
		}
		fields["mode"] = "STANDARD_REPOSITORY"
	}
	if fields["mode"] != "STANDARD_REPOSITORY" {
		return nil, unmodelled("repositories of mode %v", fields["mode"])
	}
	if err := checkRepository(fields); err != nil {
		return nil, err
	}
	now := timestamp(c.s.now())
	fields["name"] = c.repositoryName(loc, id)
	fields["createTime"], fields["updateTime"] = now, now
	if fields["format"] == "DOCKER" {
		fields["registryUri"] = loc + "-docker.pkg.dev/" + c.project + "/" + id
	}
	return fields, nil
}

// checkRepository holds a repository to the rules the docs state: a
// format, docker settings only on a docker repository, label syntax.
func checkRepository(fields map[string]any) error {
	format, _ := fields["format"].(string)
	if format == "" || format == "FORMAT_UNSPECIFIED" {
		return invalid("Repository format must be specified.")
	}
	if fields["dockerConfig"] != nil && format != "DOCKER" {
		return invalid("docker_config applies to DOCKER repositories only, not %s.", format)
	}
	labels, _ := fields["labels"].(map[string]any)
	if len(labels) > 64 {
		return invalid("A repository takes at most 64 labels, got %d.", len(labels))
	}
	for _, k := range sortedKeys(labels) {
		v, _ := labels[k].(string)
		if !labelKeyRE.MatchString(k) || !labelValueRE.MatchString(v) {
			return invalid("Label %q=%q: keys are a lowercase letter then up to 62 lowercase letters, digits, _ or -; values up to 63 of those.", k, v)
		}
	}
	return nil
}

func getRepository(c *call) (any, error) {
	r, _, err := c.repository()
	if err != nil {
		return nil, err
	}
	return r.fields, nil
}

// listRepositories answers the location's repositories in name order.
func listRepositories(c *call) (any, error) {
	if c.query.Get("filter") != "" || c.query.Get("orderBy") != "" {
		return nil, unmodelled("filters and orderings of repositories")
	}
	prefix := c.repositoryName(c.flat["locationsId"], "")
	var all []*arRepo
	for name, r := range c.s.regIAM().repos {
		if strings.HasPrefix(name, prefix) {
			all = append(all, r)
		}
	}
	slices.SortFunc(all, func(a, b *arRepo) int { return strings.Compare(a.fields["name"].(string), b.fields["name"].(string)) })
	capPageSize(c, arMaxPageSize)
	start, end, next, err := paginate(c, len(all))
	if err != nil {
		return nil, err
	}
	out := map[string]any{}
	for _, r := range all[start:end] {
		appendItem(out, "repositories", r.fields)
	}
	if next != "" {
		out["nextPageToken"] = next
	}
	return out, nil
}

// capPageSize applies an API's own cap and default (paginate knows
// Secret Manager's): a size of 0 or past max is max.
func capPageSize(c *call, max int) {
	if n, _ := strconv.Atoi(c.query.Get("pageSize")); n == 0 || n > max {
		c.query.Set("pageSize", strconv.Itoa(max))
	}
}

func patchRepository(c *call) (any, error) {
	r, _, err := c.repository()
	if err != nil {
		return nil, err
	}
	fields := cloneJSON(r.fields)
	for _, p := range c.arImpliedMask(c.query.Get("updateMask"), "Repository") {
		if err := patchRepositoryPath(fields, c.body, p); err != nil {
			return nil, err
		}
	}
	if err := checkRepository(fields); err != nil {
		return nil, err
	}
	fields["updateTime"] = timestamp(c.s.now())
	r.fields = fields
	return fields, nil
}

// arImpliedMask is the update mask's paths, lowerCamel; without one, every
// top-level field the body sets but the name and the output-only ones
// (AIP-134).
func (c *call) arImpliedMask(mask, schema string) []string {
	var out []string
	if mask == "" {
		props := c.m.doc.Schemas[schema].Properties
		for _, k := range sortedKeys(c.body) {
			if p := props[k]; k != "name" && (p == nil || !p.ReadOnly) {
				out = append(out, k)
			}
		}
		return out
	}
	for _, p := range strings.Split(mask, ",") {
		segs := strings.Split(p, ".")
		for i := range segs {
			segs[i] = lowerCamel(segs[i])
		}
		out = append(out, strings.Join(segs, "."))
	}
	return out
}

// arImmutable are the fields a patch may repeat but not change.
var arImmutable = []string{"format", "mode", "kmsKeyName"}

// patchRepositoryPath applies one path: set from the body, or cleared
// when the body leaves it out.
func patchRepositoryPath(fields, body map[string]any, path string) error {
	switch {
	case path == "dockerConfig.immutableTags":
		docker, _ := fields["dockerConfig"].(map[string]any)
		if docker == nil {
			docker = map[string]any{}
		}
		delete(docker, "immutableTags")
		if sent, _ := body["dockerConfig"].(map[string]any); sent["immutableTags"] == true {
			docker["immutableTags"] = true
		}
		delete(fields, "dockerConfig")
		setField(fields, "dockerConfig", docker)
		return nil
	case slices.Contains(arPatchable, path):
		delete(fields, path)
		setField(fields, path, body[path])
		return nil
	case slices.Contains(arImmutable, path):
		if body[path] != fields[path] {
			return invalid("Repository.%s cannot be changed.", path)
		}
		return nil
	case slices.Contains(arUnmodelled, path):
		return unmodelled("updating Repository.%s", path)
	}
	return invalid("Invalid update mask path %q: the field does not exist or cannot be updated.", path)
}

func deleteRepository(c *call) (any, error) {
	_, name, err := c.repository()
	if err != nil {
		return nil, err
	}
	st := c.s.regIAM()
	delete(st.repos, name)
	delete(st.packages, name)
	return c.startAROperation(c.flat["locationsId"], map[string]any{"@type": arEmptyType}), nil
}

// listPackages answers the packages a test seeded, in id order.
func listPackages(c *call) (any, error) {
	_, name, err := c.repository()
	if err != nil {
		return nil, err
	}
	if c.query.Get("filter") != "" || c.query.Get("orderBy") != "" {
		return nil, unmodelled("filters and orderings of packages")
	}
	ids := slices.Sorted(slices.Values(c.s.regIAM().packages[name]))
	capPageSize(c, arMaxPageSize)
	start, end, next, err := paginate(c, len(ids))
	if err != nil {
		return nil, err
	}
	out := map[string]any{}
	for _, id := range ids[start:end] {
		appendItem(out, "packages", map[string]any{"name": name + "/packages/" + id, "displayName": id,
			"createTime": c.s.started, "updateTime": c.s.started})
	}
	if next != "" {
		out["nextPageToken"] = next
	}
	return out, nil
}

// AddPackage puts a package (a docker image) into a repository, named
// projects/<id>/locations/<l>/repositories/<r>, as a push would: the
// API has no call that makes one. It reports whether the repository
// exists.
func (s *Server) AddPackage(repository, pkg string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.regIAM()
	if st.repos[repository] == nil {
		return false
	}
	st.packages[repository] = append(st.packages[repository], pkg)
	return true
}

// SetPendingPolls makes every Artifact Registry operation started from
// now on answer as running n times (its start, then n-1 polls) before it
// answers done: for tests of a client's polling. It survives Reset.
func (s *Server) SetPendingPolls(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.regIAM().pendingPolls = n
}
