package gcpfake

import (
	"slices"
	"strings"
)

// Cloud Asset Inventory v1: assets.searchAllResources, the one search a
// deep scan for ownership marks can make instead of one listing per kind.
// It answers from the fake's own products (secrets, repositories, Cloud SQL
// instances, Cloud Run services) and from the asset sources a test adds
// for the products other fakes serve (Cloud Storage, Pub/Sub). Every write
// is searchable at once, where Google's index lags the APIs by minutes.
//
// The query supports what a scan for a label needs, labels.KEY:* (the
// label is set) and labels.KEY=VALUE, and assetTypes; any other query is
// INVALID_ARGUMENT, never silently ignored. Results are in name order.

// Asset is one searchable resource, as a source reports it.
type Asset struct {
	// Name is the full resource name, //storage.googleapis.com/BUCKET.
	Name string
	// Type is the asset type, storage.googleapis.com/Bucket.
	Type string
	// Location is the resource's region, or "global".
	Location string
	Labels   map[string]string
}

// AssetSource reports the assets of a project that another fake holds.
type AssetSource func(project string) []Asset

// AddAssetSource adds a source the search answers from. It is called with
// the Server's lock held, so it must not call the Server.
func (s *Server) AddAssetSource(src AssetSource) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.assetSources = append(s.assetSources, src)
}

func (s *Server) cloudAsset() product {
	return product{api: "cloudasset", version: "v1", handlers: map[string]handler{
		"cloudasset.searchAllResources": searchAllResources,
	}}
}

// DenyAssetSearch makes the search answer 403, as for credentials without
// cloudasset.assets.searchAllResources or a project where the API is off.
func (s *Server) DenyAssetSearch() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.assetDenied = true
}

func searchAllResources(c *call) (any, error) {
	if c.s.assetDenied {
		return nil, permissionDenied("cloudasset.googleapis.com", c.params["scope"])
	}
	if c.flat["v1Id"] != "projects" {
		return nil, invalid("scope %q: the fake searches a project, projects/ID", c.params["scope"])
	}
	project := c.s.projectID(c.flat["v1Id1"])
	if isDigits(project) || !c.s.visible(project) {
		return nil, permissionDenied("cloudasset.googleapis.com", "projects/"+c.flat["v1Id1"])
	}
	match, err := assetQuery(c.query.Get("query"))
	if err != nil {
		return nil, err
	}
	types := c.query["assetTypes"]
	var found []Asset
	for _, a := range c.s.assets(project) {
		if (len(types) == 0 || slices.Contains(types, a.Type)) && match(a) {
			found = append(found, a)
		}
	}
	slices.SortFunc(found, func(a, b Asset) int { return strings.Compare(a.Name, b.Name) })
	start, end, next, err := paginate(c, len(found))
	if err != nil {
		return nil, err
	}
	out := map[string]any{}
	for _, a := range found[start:end] {
		r := map[string]any{"name": a.Name, "assetType": a.Type, "project": "projects/" + c.s.number(project),
			"displayName": a.Name[strings.LastIndex(a.Name, "/")+1:], "location": a.Location}
		if len(a.Labels) > 0 {
			r["labels"] = a.Labels
		}
		appendItem(out, "results", r)
	}
	if next != "" {
		out["nextPageToken"] = next
	}
	return out, nil
}

// assetQuery reads the query: empty, or one label term.
func assetQuery(q string) (func(Asset) bool, error) {
	q = strings.TrimSpace(q)
	if q == "" {
		return func(Asset) bool { return true }, nil
	}
	key, ok := strings.CutPrefix(q, "labels.")
	if !ok {
		return nil, invalid("query %q: the fake supports labels.KEY:* and labels.KEY=VALUE", q)
	}
	if k, set := strings.CutSuffix(key, ":*"); set {
		return func(a Asset) bool { _, has := a.Labels[k]; return has }, nil
	}
	if k, v, eq := strings.Cut(key, "="); eq {
		return func(a Asset) bool { return a.Labels[k] == v }, nil
	}
	return nil, invalid("query %q: the fake supports labels.KEY:* and labels.KEY=VALUE", q)
}

// assets are the project's searchable resources: the fake's own and the
// sources'. The caller holds s.mu.
func (s *Server) assets(project string) []Asset {
	out := s.ownAssets(project)
	for _, src := range s.assetSources {
		out = append(out, src(project)...)
	}
	return out
}

// ownAssets are the resources of the products the fake serves that carry
// labels.
func (s *Server) ownAssets(project string) []Asset {
	num := s.number(project)
	var out []Asset
	for id, sec := range s.secrets[project] {
		out = append(out, Asset{Name: "//secretmanager.googleapis.com/projects/" + num + "/secrets/" + id,
			Type: "secretmanager.googleapis.com/Secret", Location: "global", Labels: stringMap(sec.fields["labels"])})
	}
	prefix := "projects/" + project + "/locations/"
	for name, r := range s.ar.repos {
		if loc, rest, ok := strings.Cut(strings.TrimPrefix(name, prefix), "/repositories/"); ok && strings.HasPrefix(name, prefix) {
			out = append(out, Asset{Name: "//artifactregistry.googleapis.com/projects/" + project + "/locations/" + loc + "/repositories/" + rest,
				Type: "artifactregistry.googleapis.com/Repository", Location: loc, Labels: stringMap(r.fields["labels"])})
		}
	}
	for name, in := range s.ex.state.sqlInstances[project] {
		settings, _ := in.fields["settings"].(map[string]any)
		region, _ := in.fields["region"].(string)
		out = append(out, Asset{Name: "//cloudsql.googleapis.com/projects/" + project + "/instances/" + name,
			Type: "sqladmin.googleapis.com/Instance", Location: region, Labels: stringMap(settings["userLabels"])})
	}
	for name, svc := range s.ex.state.runServices {
		if loc, id, ok := strings.Cut(strings.TrimPrefix(name, prefix), "/services/"); ok && strings.HasPrefix(name, prefix) {
			out = append(out, Asset{Name: "//run.googleapis.com/projects/" + project + "/locations/" + loc + "/services/" + id,
				Type: "run.googleapis.com/Service", Location: loc, Labels: stringMap(svc.fields["labels"])})
		}
	}
	return out
}

// stringMap reads a JSON object of strings.
func stringMap(v any) map[string]string {
	m, _ := v.(map[string]any)
	out := make(map[string]string, len(m))
	for k, x := range m {
		if s, ok := x.(string); ok {
			out[k] = s
		}
	}
	return out
}
