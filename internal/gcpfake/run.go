package gcpfake

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Cloud Run Admin v2 services (v2/projects/*/locations/*/services): create
// (serviceId), get, list, patch (the whole service), delete, and
// operations get. Modelled from the API reference:
//
//   - Create, patch and delete answer a google.longrunning.Operation whose
//     metadata, and once done response, is the Service as an Any
//     (type.googleapis.com/google.cloud.run.v2.Service); see
//     operations_run.go. The service exists from the create on,
//     reconciling and with its Ready condition CONDITION_RECONCILING; when
//     the operation completes it is reconciled (CONDITION_SUCCEEDED, or
//     CONDITION_FAILED with the operation's error). A patch is stored at
//     once and reconciled likewise; a delete removes the service at once.
//   - Output-only fields of a request are ignored; the server fills what
//     Cloud Run defaults (limits cpu 1000m and memory 512Mi, timeout
//     300s, concurrency 80, port 8080, the default compute service
//     account, ingress all, 100% of traffic to the latest revision), a
//     revision <service>-<00001>-<abc> for each new template, uri
//     https://<service>-<hash>-<region letters>.a.run.app and the
//     deterministic URL in urls.
//   - serviceId is required (lowercase letters, digits, '-', 49 at most);
//     every container needs an image; memory is a quantity (Mi, Gi, M, G)
//     of 128Mi to 32Gi; timeout at most 3600s; the env names PORT,
//     K_SERVICE, K_REVISION and K_CONFIGURATION are reserved; labels
//     follow the label syntax.
//   - A patch or delete whose etag is not the current one answers ABORTED
//     (409); a patch of a missing service NOT_FOUND.
//
// Not modelled (UNIMPLEMENTED): update masks, allowMissing, validateOnly,
// jobs, revisions, IAM policies, operations list/delete/wait.

func (s *Server) cloudRun() product {
	const p = "run.projects.locations."
	return product{api: "run", version: "v2", handlers: map[string]handler{
		p + "services.create": createService,
		p + "services.get":    getService,
		p + "services.list":   listServices,
		p + "services.patch":  patchService,
		p + "services.delete": deleteService,
		p + "operations.get":  getRunOperation,
	}}
}

const runServiceType = "google.cloud.run.v2.Service"

// runService is one service: its Service JSON, as answered.
type runService struct {
	fields   map[string]any
	revision int // the last revision's number
}

var (
	serviceIDRE = regexp.MustCompile(`^[a-z]([a-z0-9-]{0,47}[a-z0-9])?$`)
	quantityRE  = regexp.MustCompile(`^([0-9]+)(Mi|Gi|M|G)$`)
)

// runParent is projects/<id>/locations/<l>: the path's, with the project
// as an id, as the fake keys everything.
func (c *call) runParent() string {
	return "projects/" + c.project + "/locations/" + c.flat["locationsId"]
}

func (c *call) runService() (*runService, string, error) {
	name := c.runParent() + "/services/" + c.flat["servicesId"]
	if svc := c.s.extra().state.runServices[name]; svc != nil {
		return svc, name, nil
	}
	return nil, name, notFound("Resource '%s' was not found", name)
}

func createService(c *call) (any, error) {
	id := c.query.Get("serviceId")
	if c.query.Get("validateOnly") == "true" {
		return nil, unmodelled("validateOnly")
	}
	if !serviceIDRE.MatchString(id) {
		return nil, invalid("service_id %q must be 1 to 49 lowercase letters, digits and hyphens, starting with a letter and not ending with a hyphen.", id)
	}
	name := c.runParent() + "/services/" + id
	st := c.s.extra().state
	if st.runServices[name] != nil {
		return nil, errorf("ALREADY_EXISTS", "Resource '%s' already exists.", name)
	}
	in, err := c.serviceInput()
	if err != nil {
		return nil, err
	}
	now := timestamp(c.s.now())
	svc := &runService{fields: in}
	for k, v := range map[string]any{"name": name, "uid": newUUID(), "generation": "1", "createTime": now,
		"uri": c.runURI(id), "urls": []any{c.runURI(id), "https://" + id + "-" + c.s.number(c.project) + "." + c.flat["locationsId"] + ".run.app"}} {
		svc.fields[k] = v
	}
	c.newRevision(svc, id, now)
	st.runServices[name] = svc
	return c.startRunOp(svc), nil
}

// runURI is https://<service>-<project hash>-<region letters>.a.run.app.
func (c *call) runURI(id string) string {
	h := fnv.New32a()
	h.Write([]byte(c.project))
	var short strings.Builder
	for _, part := range strings.Split(c.flat["locationsId"], "-") {
		if part != "" {
			short.WriteByte(part[0])
		}
	}
	return fmt.Sprintf("https://%s-%s-%s.a.run.app", id, strconv.FormatUint(uint64(h.Sum32()), 36), short.String())
}

// serviceInput is the request's Service without its output-only fields,
// checked, with Cloud Run's defaults filled in.
func (c *call) serviceInput() (map[string]any, error) {
	doc := c.m.doc
	in, _ := stripReadOnly(doc, doc.Schemas["GoogleCloudRunV2Service"], cloneJSON(c.body)).(map[string]any)
	for _, k := range []string{"name", "etag"} {
		delete(in, k)
	}
	if err := c.checkService(in); err != nil {
		return nil, err
	}
	c.serviceDefaults(in)
	return in, nil
}

// stripReadOnly drops the properties the schema marks output only, at
// every depth.
func stripReadOnly(d *Doc, s *Schema, v any) any {
	s = d.deref(s)
	switch x := v.(type) {
	case []any:
		for i := range x {
			if s != nil && s.Items != nil {
				x[i] = stripReadOnly(d, s.Items, x[i])
			}
		}
	case map[string]any:
		if s == nil {
			return x
		}
		for k, e := range x {
			p := s.Properties[k]
			switch {
			case p != nil && p.ReadOnly:
				delete(x, k)
			case p != nil:
				x[k] = stripReadOnly(d, p, e)
			case s.AdditionalProperties != nil:
				x[k] = stripReadOnly(d, s.AdditionalProperties, e)
			}
		}
	}
	return v
}

var reservedEnv = []string{"PORT", "K_SERVICE", "K_REVISION", "K_CONFIGURATION"}

func (c *call) checkService(in map[string]any) error {
	tmpl, _ := in["template"].(map[string]any)
	containers, _ := tmpl["containers"].([]any)
	if len(containers) == 0 {
		return invalid("service.template.containers: at least one container is required.")
	}
	for i, x := range containers {
		ct, _ := x.(map[string]any)
		if img, _ := ct["image"].(string); img == "" {
			return invalid("service.template.containers[%d].image: the image is required.", i)
		}
		if err := checkContainer(i, ct); err != nil {
			return err
		}
	}
	if t, _ := tmpl["timeout"].(string); t != "" {
		if d, err := time.ParseDuration(t); err != nil || d <= 0 || d > time.Hour {
			return invalid("service.template.timeout %q must be a positive duration of at most 3600s.", t)
		}
	}
	for _, l := range []any{in["labels"], tmpl["labels"]} {
		if err := checkSQLLabels(l); err != nil {
			return err
		}
	}
	return nil
}

func checkContainer(i int, ct map[string]any) error {
	res, _ := ct["resources"].(map[string]any)
	limits, _ := res["limits"].(map[string]any)
	if mem, ok := limits["memory"].(string); ok {
		mi, ok := mebibytes(mem)
		if !ok || mi < 128 || mi > 32*1024 {
			return invalid("service.template.containers[%d].resources.limits.memory %q must be a quantity of 128Mi to 32Gi.", i, mem)
		}
	}
	env, _ := ct["env"].([]any)
	for _, e := range env {
		name, _ := e.(map[string]any)["name"].(string)
		switch {
		case name == "":
			return invalid("service.template.containers[%d].env: every variable needs a name.", i)
		case slices.Contains(reservedEnv, name):
			return invalid("The following reserved env names were provided: %s. These values are automatically set by the system.", name)
		}
	}
	return nil
}

// mebibytes reads a memory quantity as MiB.
func mebibytes(q string) (float64, bool) {
	m := quantityRE.FindStringSubmatch(q)
	if m == nil {
		return 0, false
	}
	n, _ := strconv.ParseFloat(m[1], 64)
	switch m[2] {
	case "Gi":
		n *= 1024
	case "M":
		n = n * 1e6 / (1 << 20)
	case "G":
		n = n * 1e9 / (1 << 20)
	}
	return n, true
}

// serviceDefaults fills what Cloud Run answers for fields left out.
func (c *call) serviceDefaults(in map[string]any) {
	setDefault(in, "ingress", "INGRESS_TRAFFIC_ALL")
	setDefault(in, "launchStage", "GA")
	setDefault(in, "traffic", []any{map[string]any{"type": "TRAFFIC_TARGET_ALLOCATION_TYPE_LATEST", "percent": 100}})
	tmpl, _ := in["template"].(map[string]any)
	setDefault(tmpl, "timeout", "300s")
	setDefault(tmpl, "maxInstanceRequestConcurrency", 80)
	setDefault(tmpl, "serviceAccount", c.s.number(c.project)+"-compute@developer.gserviceaccount.com")
	setDefault(tmpl, "scaling", map[string]any{"maxInstanceCount": 100})
	containers, _ := tmpl["containers"].([]any)
	for _, x := range containers {
		ct := x.(map[string]any) // checkService made sure
		setDefault(ct, "ports", []any{map[string]any{"name": "http1", "containerPort": 8080}})
		setDefault(ct, "resources", map[string]any{})
		res := ct["resources"].(map[string]any)
		setDefault(res, "limits", map[string]any{})
		limits := res["limits"].(map[string]any)
		setDefault(limits, "cpu", "1000m")
		setDefault(limits, "memory", "512Mi")
		setDefault(res, "cpuIdle", true)
	}
}

func setDefault(m map[string]any, k string, v any) {
	if _, ok := m[k]; !ok {
		m[k] = v
	}
}

// newRevision gives the service a new revision, reconciling towards it.
func (c *call) newRevision(svc *runService, id, now string) {
	svc.revision++
	rev := fmt.Sprintf("%s/services/%s/revisions/%s-%05d-%s", c.runParent(), id, id, svc.revision, randomLetters(3))
	svc.fields["latestCreatedRevision"] = rev
	svc.fields["updateTime"] = now
	svc.fields["etag"] = newEtag()
	svc.fields["reconciling"] = true
	svc.fields["terminalCondition"] = map[string]any{"type": "Ready", "state": "CONDITION_RECONCILING", "lastTransitionTime": now}
}

func randomLetters(n int) string {
	b := []byte(randomHex(n))
	for i := range b {
		b[i] = 'a' + b[i]%26
	}
	return string(b[:n])
}

// startRunOp starts the operation that reconciles svc, and answers it.
func (c *call) startRunOp(svc *runService) map[string]any {
	name := c.runParent() + "/operations/" + newUUID()
	doc := c.m.doc
	return c.startLRO("run", name, anyOf(runServiceType, svc.fields), func(fail *apiError, c *call) map[string]any {
		reconcile(svc, fail, timestamp(c.s.now()))
		// The Any is typed "any" in the document, so the answer's check
		// passes over it: the fake holds it to the Service schema itself.
		// (The handler runs under s.mu, which guards violations.)
		for _, e := range doc.Check("GoogleCloudRunV2Service", cloneJSON(svc.fields), CheckOptions{Response: true}) {
			c.s.violations = append(c.s.violations, "run operation "+name+": response: "+e)
		}
		return anyOf(runServiceType, svc.fields)
	})
}

// reconcile settles a service when its operation completes.
func reconcile(svc *runService, fail *apiError, now string) {
	f := svc.fields
	f["reconciling"] = false
	cond := map[string]any{"type": "Ready", "state": "CONDITION_SUCCEEDED", "lastTransitionTime": now}
	if fail != nil {
		cond["state"] = "CONDITION_FAILED"
		cond["message"] = fail.message
		f["terminalCondition"] = cond
		return
	}
	f["terminalCondition"] = cond
	f["conditions"] = []any{map[string]any{"type": "RoutesReady", "state": "CONDITION_SUCCEEDED", "lastTransitionTime": now}}
	f["latestReadyRevision"] = f["latestCreatedRevision"]
	f["observedGeneration"] = f["generation"]
	f["trafficStatuses"] = []any{map[string]any{"type": "TRAFFIC_TARGET_ALLOCATION_TYPE_LATEST", "percent": 100}}
}

func getService(c *call) (any, error) {
	svc, _, err := c.runService()
	if err != nil {
		return nil, err
	}
	return cloneJSON(svc.fields), nil
}

func listServices(c *call) (any, error) {
	prefix := c.runParent() + "/services/"
	var names []string
	for name := range c.s.extra().state.runServices {
		if strings.HasPrefix(name, prefix) {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	start, end, next, err := paginate(c, len(names))
	if err != nil {
		return nil, err
	}
	out := map[string]any{}
	for _, n := range names[start:end] {
		appendItem(out, "services", cloneJSON(c.s.extra().state.runServices[n].fields))
	}
	if next != "" {
		out["nextPageToken"] = next
	}
	return out, nil
}

// patchService replaces the service's inputs with the body's: a new
// revision when the template changed, a new generation when anything did.
func patchService(c *call) (any, error) {
	for _, q := range []string{"updateMask", "allowMissing", "validateOnly"} {
		if c.query.Has(q) {
			return nil, unmodelled("%s on services.patch (send the whole service)", q)
		}
	}
	svc, _, err := c.runService()
	if err != nil {
		return nil, err
	}
	if etag, _ := c.body["etag"].(string); etag != "" && etag != svc.fields["etag"] {
		return nil, errorf("ABORTED", "The etag %s does not match the service's current etag.", etag)
	}
	in, err := c.serviceInput()
	if err != nil {
		return nil, err
	}
	oldTemplate, _ := json.Marshal(svc.fields["template"])
	newTemplate, _ := json.Marshal(in["template"])
	next := cloneJSON(svc.fields)
	for k := range stripReadOnly(c.m.doc, c.m.doc.Schemas["GoogleCloudRunV2Service"], cloneJSON(next)).(map[string]any) {
		if k != "name" && k != "etag" {
			delete(next, k)
		}
	}
	for k, v := range in {
		next[k] = v
	}
	gen, _ := strconv.Atoi(fmt.Sprint(next["generation"]))
	next["generation"] = strconv.Itoa(gen + 1)
	svc.fields = next
	now := timestamp(c.s.now())
	if string(oldTemplate) != string(newTemplate) {
		c.newRevision(svc, c.flat["servicesId"], now)
	} else {
		next["updateTime"], next["etag"], next["reconciling"] = now, newEtag(), true
	}
	return c.startRunOp(svc), nil
}

func deleteService(c *call) (any, error) {
	if c.query.Get("validateOnly") == "true" {
		return nil, unmodelled("validateOnly")
	}
	svc, name, err := c.runService()
	if err != nil {
		return nil, err
	}
	if etag := c.query.Get("etag"); etag != "" && etag != svc.fields["etag"] {
		return nil, errorf("ABORTED", "The etag %s does not match the service's current etag.", etag)
	}
	delete(c.s.extra().state.runServices, name)
	now := timestamp(c.s.now())
	svc.fields["deleteTime"] = now
	svc.fields["expireTime"] = now
	return c.startRunOp(svc), nil
}

func getRunOperation(c *call) (any, error) {
	name := c.runParent() + "/operations/" + c.flat["operationsId"]
	op := c.s.extra().state.lros[name]
	if op == nil {
		return nil, notFound("Operation '%s' was not found", name)
	}
	return op.read(c), nil
}
