package gcpfake

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// Cloud SQL Admin v1 (v1/projects/{project}/instances…): instances
// insert, get, list, patch, delete; operations get; users insert, list,
// update. Modelled from the API reference and Cloud SQL's documentation:
//
//   - Every mutation answers a sql#operation (PENDING, then DONE with or
//     without error; see operations_run.go); the instance is
//     PENDING_CREATE until its create is done, then RUNNABLE with a
//     PRIMARY address; a patch takes effect when done; a deleted instance
//     is PENDING_DELETE, then gone. A mutation while another operation on
//     the instance runs answers 409 (operationInProgress).
//   - Names are project-wide; a second insert of one answers 409, as does
//     one of a deleted instance's name while ReserveDeletedNames is on.
//   - databaseVersion defaults to MYSQL_8_0; PostgreSQL 16 and later
//     default to the ENTERPRISE_PLUS edition, which takes
//     db-perf-optimized-N-* tiers only; ENTERPRISE takes db-custom-N-M
//     (N = 1 or even up to 96, M a multiple of 256 MB, 0.9 to 6.5 GB per
//     vCPU, at least 3840) and the shared-core tiers. settings.tier is
//     required at insert.
//   - A patch merges settings field by field and userLabels key by key (a
//     null value removes a label, as gcloud sends it); a settingsVersion
//     that is not the current one answers 412 (staleData); databaseVersion
//     may move to a later PostgreSQL major (an in-place upgrade), never an
//     earlier one.
//   - Delete refuses an instance with deletionProtectionEnabled.
//   - PostgreSQL instances have the built-in user postgres (rootPassword
//     at insert sets its password); a user is made when its operation is
//     done; a second insert of a name answers 409 (a choice: Google does
//     not document the answer); passwords are never answered, nor checked
//     against a password policy.
//
// Not modelled (UNIMPLEMENTED): list filters, validate-style flags,
// patching fields other than settings and databaseVersion, the many other
// methods (clones, backups, imports, replicas). Project numbers are not
// accepted in paths: Cloud SQL takes the project id.

func (s *Server) sqlAdmin() product {
	return product{api: "sqladmin", version: "v1", handlers: map[string]handler{
		"sql.instances.insert": sqlScoped(insertInstance),
		"sql.instances.get":    sqlScoped(getInstance),
		"sql.instances.list":   sqlScoped(listInstances),
		"sql.instances.patch":  sqlScoped(patchInstance),
		"sql.instances.delete": sqlScoped(deleteInstance),
		"sql.operations.get":   sqlScoped(getSQLOperation),
		"sql.users.insert":     sqlScoped(insertUser),
		"sql.users.list":       sqlScoped(listUsers),
		"sql.users.update":     sqlScoped(updateUser),
	}}
}

// staleData is Cloud SQL's answer to a stale settingsVersion: HTTP 412
// "Condition does not match." (httpStatus).
const staleData = "STALE_DATA"

// sqlInstance is one instance: its DatabaseInstance JSON, its users, and
// the operation running on it.
type sqlInstance struct {
	fields map[string]any
	users  map[string]map[string]any
	busy   *sqlOp
}

// sqlOp is one sql#operation and the change it makes when done.
type sqlOp struct {
	fields map[string]any
	polls  int
	fail   string
	inst   *sqlInstance
	apply  func(failed bool)
	now    func() string
}

var sqlNameRE = regexp.MustCompile(`^[a-z]([a-z0-9-]{0,61}[a-z0-9])?$`)

// sqlScoped resolves the path's project, which Cloud SQL's document names
// {project} rather than {projectsId}, and refuses one the caller may not
// see, as checkProject does for the others.
func sqlScoped(h handler) handler {
	return func(c *call) (any, error) {
		seg := c.flat["project"]
		c.project = c.s.projectID(seg)
		if isDigits(c.project) || !c.s.visible(c.project) {
			return nil, permissionDenied(serviceName(c.m.doc), "projects/"+seg)
		}
		return h(c)
	}
}

func (c *call) sqlInstances() map[string]*sqlInstance {
	st := c.s.extra().state
	m := st.sqlInstances[c.project]
	if m == nil {
		m = map[string]*sqlInstance{}
		st.sqlInstances[c.project] = m
	}
	return m
}

// sqlInstance is the path's instance, or 404.
func (c *call) sqlInstance() (*sqlInstance, error) {
	if inst := c.sqlInstances()[c.params["instance"]]; inst != nil {
		return inst, nil
	}
	return nil, notFound("The Cloud SQL instance does not exist.")
}

// sqlIdle is the path's instance when a new operation may start on it.
func (c *call) sqlIdle() (*sqlInstance, error) {
	inst, err := c.sqlInstance()
	if err != nil {
		return nil, err
	}
	if inst.busy != nil || inst.fields["state"] == "PENDING_DELETE" {
		return nil, errorf("ABORTED", "Operation failed because another operation was already in progress.")
	}
	return inst, nil
}

func sqlSelfLink(project, rest string) string {
	return "https://sqladmin.googleapis.com/v1/projects/" + project + "/" + rest
}

func insertInstance(c *call) (any, error) {
	name, _ := c.body["name"].(string)
	if !sqlNameRE.MatchString(name) {
		return nil, invalid("Invalid request: instance name %q must be 1 to 63 lowercase letters, digits and hyphens, starting with a letter.", name)
	}
	if err := c.sqlNameFree(name); err != nil {
		return nil, err
	}
	inst, err := c.newInstance(name)
	if err != nil {
		return nil, err
	}
	c.sqlInstances()[name] = inst
	ip := fmt.Sprintf("34.155.%d.%d", c.nextSeq()%250, 10+len(c.sqlInstances()))
	return c.startSQLOp(inst, "CREATE", func(failed bool) {
		if failed {
			inst.fields["state"] = "FAILED"
			return
		}
		inst.fields["state"] = "RUNNABLE"
		inst.fields["ipAddresses"] = []any{map[string]any{"type": "PRIMARY", "ipAddress": ip}}
	}), nil
}

func (c *call) sqlNameFree(name string) error {
	if c.sqlInstances()[name] != nil {
		return errorf("ALREADY_EXISTS", "The Cloud SQL instance already exists.")
	}
	if c.s.extra().state.sqlReserved[c.project][name] {
		return errorf("ALREADY_EXISTS", "The Cloud SQL instance already exists. When you delete an instance, "+
			"you can't reuse the name of the deleted instance until one week from the deletion date.")
	}
	return nil
}

// inputOnly are DatabaseInstance fields a request sets and no answer
// carries.
var inputOnly = []string{"rootPassword", "tags", "includeReplicasForMajorVersionUpgrade", "skipPrecheck",
	"switchTransactionLogsToCloudStorageEnabled"}

func (c *call) newInstance(name string) (*sqlInstance, error) {
	fields := cloneJSON(c.body)
	for _, k := range inputOnly {
		delete(fields, k)
	}
	version, _ := fields["databaseVersion"].(string)
	if version == "" || version == "SQL_DATABASE_VERSION_UNSPECIFIED" {
		version = "MYSQL_8_0"
	}
	settings, _ := fields["settings"].(map[string]any)
	if settings == nil {
		settings = map[string]any{}
	}
	if _, ok := settings["edition"]; !ok {
		settings["edition"] = defaultEdition(version)
	}
	if err := checkSQLSettings(settings); err != nil {
		return nil, err
	}
	sqlSettingDefaults(settings)
	region, _ := fields["region"].(string)
	region = orDefault(region, "us-central1")
	setVersion(fields, version)
	for k, v := range map[string]any{
		"kind": "sql#instance", "name": name, "project": c.project, "region": region, "settings": settings,
		"state": "PENDING_CREATE", "backendType": "SECOND_GEN", "instanceType": "CLOUD_SQL_INSTANCE",
		"connectionName": c.project + ":" + region + ":" + name, "gceZone": region + "-a",
		"selfLink":                   sqlSelfLink(c.project, "instances/"+name),
		"serviceAccountEmailAddress": "p" + c.s.number(c.project) + "-" + randomHex(3) + "@gcp-sa-cloud-sql.iam.gserviceaccount.com",
		"createTime":                 timestamp(c.s.now()),
	} {
		fields[k] = v
	}
	inst := &sqlInstance{fields: fields, users: map[string]map[string]any{}}
	if pgMajor(version) > 0 {
		inst.users["postgres"] = c.userJSON(name, map[string]any{"name": "postgres"})
	}
	return inst, nil
}

// defaultEdition is what Cloud SQL picks when the insert names none.
func defaultEdition(version string) string {
	if pgMajor(version) >= 16 {
		return "ENTERPRISE_PLUS"
	}
	return "ENTERPRISE"
}

// sqlSettingDefaults fills what Cloud SQL answers for settings left out.
func sqlSettingDefaults(settings map[string]any) {
	for k, v := range map[string]any{
		"kind": "sql#settings", "activationPolicy": "ALWAYS", "availabilityType": "ZONAL", "pricingPlan": "PER_USE",
		"dataDiskType": "PD_SSD", "dataDiskSizeGb": "10", "storageAutoResize": true,
		"ipConfiguration":     map[string]any{"ipv4Enabled": true},
		"backupConfiguration": map[string]any{"kind": "sql#backupConfiguration", "enabled": false},
	} {
		if _, ok := settings[k]; !ok {
			settings[k] = v
		}
	}
	settings["settingsVersion"] = "1"
}

var pgVersionRE = regexp.MustCompile(`^POSTGRES_([0-9]+)$`)

// pgMajor is a databaseVersion's PostgreSQL major, 0 for another engine
// (or 9.6).
func pgMajor(v string) int {
	m := pgVersionRE.FindStringSubmatch(v)
	if m == nil {
		return 0
	}
	n, _ := strconv.Atoi(m[1])
	return n
}

// newestPostgres is the newest major the fake offers for an upgrade.
const newestPostgres = 18

// setVersion sets a databaseVersion, the version installed for it (its
// latest minor, here always .4) and the versions it may upgrade to.
func setVersion(fields map[string]any, version string) {
	fields["databaseVersion"] = version
	fields["databaseInstalledVersion"] = version + "_4"
	delete(fields, "upgradableDatabaseVersions")
	if m := pgMajor(version); m > 0 {
		var up []any
		for n := m + 1; n <= newestPostgres; n++ {
			v := "POSTGRES_" + strconv.Itoa(n)
			up = append(up, map[string]any{"majorVersion": v, "name": v, "displayName": "PostgreSQL " + strconv.Itoa(n)})
		}
		setField(fields, "upgradableDatabaseVersions", up)
	}
}

var (
	customTierRE = regexp.MustCompile(`^db-custom-([0-9]+)-([0-9]+)$`)
	perfTierRE   = regexp.MustCompile(`^db-perf-optimized-N-(2|4|8|16|32|48|64|80|96|128)$`)
)

// checkSQLSettings holds settings to the tier rules of their edition and
// to the label syntax.
func checkSQLSettings(settings map[string]any) error {
	tier, _ := settings["tier"].(string)
	edition, _ := settings["edition"].(string)
	switch {
	case tier == "":
		return invalid("Invalid request: settings.tier is required.")
	case edition == "ENTERPRISE_PLUS" && !perfTierRE.MatchString(tier):
		return invalid("Invalid Tier (%s) for (ENTERPRISE_PLUS) Edition. Use a predefined Tier like db-perf-optimized-N-* instead.", tier)
	case edition == "ENTERPRISE" && tier != "db-f1-micro" && tier != "db-g1-small" && !validCustomTier(tier):
		return invalid("Invalid Tier (%s) for (ENTERPRISE) Edition: a custom machine has 1 or an even number of vCPUs up to 96, "+
			"and 0.9 to 6.5 GB per vCPU in multiples of 256 MB, at least 3840 MB.", tier)
	case edition != "ENTERPRISE" && edition != "ENTERPRISE_PLUS":
		return unmodelled("the %s edition", edition)
	}
	return checkSQLLabels(settings["userLabels"])
}

func validCustomTier(tier string) bool {
	m := customTierRE.FindStringSubmatch(tier)
	if m == nil {
		return false
	}
	cpus, _ := strconv.Atoi(m[1])
	mem, _ := strconv.Atoi(m[2])
	okCPUs := cpus == 1 || (cpus >= 2 && cpus <= 96 && cpus%2 == 0)
	return okCPUs && mem%256 == 0 && mem >= 3840 && mem*10 >= 9216*cpus && mem <= 6656*cpus
}

func checkSQLLabels(v any) error {
	labels, _ := v.(map[string]any)
	if len(labels) > 64 {
		return invalid("An instance takes at most 64 labels, got %d.", len(labels))
	}
	for _, k := range sortedKeys(labels) {
		val, _ := labels[k].(string)
		if !labelKeyRE.MatchString(k) || !labelValueRE.MatchString(val) {
			return invalid("Invalid label %q=%q: keys are a lowercase letter then up to 62 lowercase letters, digits, _ or -; values up to 63 of those.", k, val)
		}
	}
	return nil
}

// startSQLOp records a new operation on inst and answers it; apply makes
// its change when it completes.
func (c *call) startSQLOp(inst *sqlInstance, opType string, apply func(failed bool)) map[string]any {
	polls, fail := c.opStart("sqladmin")
	name := newUUID()
	target, _ := inst.fields["name"].(string)
	clock := c.s.now // not c: the operation outlives the call, and must not hold the Server
	now := func() string { return timestamp(clock()) }
	op := &sqlOp{polls: polls, fail: fail, inst: inst, apply: apply, now: now, fields: map[string]any{
		"kind": "sql#operation", "name": name, "operationType": opType, "status": "PENDING",
		"targetId": target, "targetProject": c.project, "targetLink": sqlSelfLink(c.project, "instances/"+target),
		"selfLink": sqlSelfLink(c.project, "operations/"+name), "insertTime": now(),
	}}
	st := c.s.extra().state
	if st.sqlOps[c.project] == nil {
		st.sqlOps[c.project] = map[string]*sqlOp{}
	}
	st.sqlOps[c.project][name] = op
	inst.busy = op
	if polls == 0 {
		op.complete()
	}
	return cloneJSON(op.fields)
}

func (op *sqlOp) complete() {
	op.fields["status"] = "DONE"
	op.fields["startTime"] = op.fields["insertTime"]
	op.fields["endTime"] = op.now()
	if op.inst.busy == op {
		op.inst.busy = nil
	}
	if op.fail != "" {
		op.fields["error"] = map[string]any{"kind": "sql#operationErrors", "errors": []any{
			map[string]any{"kind": "sql#operationError", "code": "INTERNAL_ERROR", "message": op.fail}}}
		op.apply(true)
		return
	}
	op.apply(false)
}

func getSQLOperation(c *call) (any, error) {
	op := c.s.extra().state.sqlOps[c.project][c.params["operation"]]
	if op == nil {
		return nil, notFound("The operation %s does not exist.", c.params["operation"])
	}
	if op.fields["status"] != "DONE" {
		if op.polls--; op.polls <= 0 {
			op.complete()
		} else {
			op.fields["status"] = "RUNNING"
		}
	}
	return cloneJSON(op.fields), nil
}

func getInstance(c *call) (any, error) {
	inst, err := c.sqlInstance()
	if err != nil {
		return nil, err
	}
	return cloneJSON(inst.fields), nil
}

// listInstances answers the project's instances by name, maxResults a
// page (500 when unset).
func listInstances(c *call) (any, error) {
	if c.query.Get("filter") != "" {
		return nil, unmodelled("filters on instances.list")
	}
	m := c.sqlInstances()
	names := sortedKeys(m)
	size, _ := strconv.Atoi(c.query.Get("maxResults"))
	if size <= 0 {
		size = 500
	}
	key := c.m.ID + " " + c.project
	start := 0
	if tok := c.query.Get("pageToken"); tok != "" {
		var ok bool
		if start, ok = decodePageToken(tok, key); !ok {
			return nil, invalid("Invalid page token %q.", tok)
		}
		start = min(start, len(names))
	}
	end := min(start+size, len(names))
	out := map[string]any{"kind": "sql#instancesList"}
	for _, n := range names[start:end] {
		appendItem(out, "items", cloneJSON(m[n].fields))
	}
	if end < len(names) {
		out["nextPageToken"] = encodePageToken(end, key)
	}
	return out, nil
}

func patchInstance(c *call) (any, error) {
	inst, err := c.sqlIdle()
	if err != nil {
		return nil, err
	}
	next, err := c.patched(inst)
	if err != nil {
		return nil, err
	}
	return c.startSQLOp(inst, "UPDATE", func(failed bool) {
		if !failed {
			state := inst.fields["state"]
			inst.fields = next
			inst.fields["state"] = state
		}
	}), nil
}

// patched is the instance as the patch would leave it.
func (c *call) patched(inst *sqlInstance) (map[string]any, error) {
	next := cloneJSON(inst.fields)
	for _, k := range sortedKeys(c.body) {
		var err error
		switch v := c.body[k]; k {
		case "settings":
			err = patchSettings(next, v)
		case "databaseVersion":
			err = upgradeVersion(next, fmt.Sprint(v))
		case "name", "project", "region", "kind":
			if v != nil && fmt.Sprint(v) != fmt.Sprint(next[k]) {
				err = invalid("Invalid request: the instance's %s cannot be changed.", k)
			}
		default:
			err = unmodelled("patching DatabaseInstance.%s", k)
		}
		if err != nil {
			return nil, err
		}
	}
	return next, nil
}

// patchSettings merges a patch's settings into next's: field by field,
// and userLabels key by key, a null removing one.
func patchSettings(next map[string]any, v any) error {
	in, _ := v.(map[string]any)
	cur, _ := next["settings"].(map[string]any)
	if sv, ok := in["settingsVersion"]; ok && fmt.Sprint(sv) != fmt.Sprint(cur["settingsVersion"]) {
		return &apiError{status: staleData, message: "Condition does not match."}
	}
	for _, k := range sortedKeys(in) {
		switch val := in[k]; {
		case k == "settingsVersion" || k == "kind":
		case k == "userLabels":
			labels, _ := cur["userLabels"].(map[string]any)
			labels = mergeLabels(labels, val)
			delete(cur, "userLabels")
			setField(cur, "userLabels", labels)
		case val == nil:
			delete(cur, k)
		default:
			cur[k] = val
		}
	}
	if err := checkSQLSettings(cur); err != nil {
		return err
	}
	n, _ := strconv.ParseInt(fmt.Sprint(cur["settingsVersion"]), 10, 64)
	cur["settingsVersion"] = strconv.FormatInt(n+1, 10)
	return nil
}

func mergeLabels(cur map[string]any, patch any) map[string]any {
	out := map[string]any{}
	for k, v := range cur {
		out[k] = v
	}
	p, _ := patch.(map[string]any)
	for k, v := range p {
		if v == nil {
			delete(out, k)
		} else {
			out[k] = v
		}
	}
	return out
}

// upgradeVersion moves a PostgreSQL instance to a later major in place.
func upgradeVersion(next map[string]any, version string) error {
	cur, _ := next["databaseVersion"].(string)
	switch from, to := pgMajor(cur), pgMajor(version); {
	case version == cur:
		return nil
	case from == 0:
		return unmodelled("changing the version of a %s instance", cur)
	case to == 0 || to > newestPostgres:
		return invalid("Invalid request: %s is not a version a %s instance can upgrade to.", version, cur)
	case to < from:
		return invalid("Invalid request: %s cannot be downgraded to %s.", cur, version)
	}
	setVersion(next, version)
	return nil
}

func deleteInstance(c *call) (any, error) {
	inst, err := c.sqlIdle()
	if err != nil {
		return nil, err
	}
	settings, _ := inst.fields["settings"].(map[string]any)
	if settings["deletionProtectionEnabled"] == true {
		return nil, invalid("The instance is protected from deletion: set settings.deletionProtectionEnabled to false first.")
	}
	was := inst.fields["state"]
	inst.fields["state"] = "PENDING_DELETE"
	instances, name := c.sqlInstances(), c.params["instance"]
	st, project, reserve := c.s.extra().state, c.project, c.s.extra().knobs.reserve
	return c.startSQLOp(inst, "DELETE", func(failed bool) {
		if failed {
			inst.fields["state"] = was
			return
		}
		delete(instances, name)
		if reserve {
			if st.sqlReserved[project] == nil {
				st.sqlReserved[project] = map[string]bool{}
			}
			st.sqlReserved[project][name] = true
		}
	}), nil
}

// userJSON is a User as users.list answers it: never the password; the
// type left out for a built-in user, as protojson leaves out the zero
// enum.
func (c *call) userJSON(instance string, body map[string]any) map[string]any {
	u := map[string]any{"kind": "sql#user", "instance": instance, "project": c.project}
	for _, k := range []string{"name", "host", "type", "databaseRoles"} {
		setField(u, k, body[k])
	}
	if u["type"] == "BUILT_IN" {
		delete(u, "type")
	}
	return u
}

func insertUser(c *call) (any, error) {
	inst, err := c.sqlIdle()
	if err != nil {
		return nil, err
	}
	name, _ := c.body["name"].(string)
	if name == "" {
		return nil, invalid("Invalid request: the user's name is required.")
	}
	if inst.users[name] != nil {
		return nil, errorf("ALREADY_EXISTS", "User %s already exists in instance %s.", name, c.params["instance"])
	}
	user := c.userJSON(c.params["instance"], c.body)
	return c.startSQLOp(inst, "CREATE_USER", func(failed bool) {
		if !failed {
			inst.users[name] = user
		}
	}), nil
}

func listUsers(c *call) (any, error) {
	inst, err := c.sqlInstance()
	if err != nil {
		return nil, err
	}
	names := sortedKeys(inst.users)
	out := map[string]any{"kind": "sql#usersList"}
	for _, n := range names {
		appendItem(out, "items", cloneJSON(inst.users[n]))
	}
	return out, nil
}

// updateUser sets a user's password (the user named by the name
// parameter; the body's other fields are not modelled beyond it).
func updateUser(c *call) (any, error) {
	inst, err := c.sqlIdle()
	if err != nil {
		return nil, err
	}
	name := c.query.Get("name")
	if inst.users[name] == nil {
		return nil, notFound("The user %s does not exist in instance %s.", name, c.params["instance"])
	}
	for _, k := range sortedKeys(c.body) {
		if !slices.Contains([]string{"password", "name", "instance", "project", "kind", "host"}, k) {
			return nil, unmodelled("updating User.%s", k)
		}
	}
	return c.startSQLOp(inst, "UPDATE_USER", func(bool) {}), nil
}

// newUUID is an operation name as Cloud SQL writes one.
func newUUID() string {
	h := randomHex(16)
	return strings.Join([]string{h[:8], h[8:12], h[12:16], h[16:20], h[20:]}, "-")
}
