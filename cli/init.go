package cli

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"text/template"

	"github.com/spf13/cobra"

	"github.com/infra-iac/infra/cli/workflows"
	"github.com/infra-iac/infra/spec"
)

type initOptions struct {
	name    string
	account string
	// sdkReplace is a checkout of this repository for go.mod's replace
	// line: the SDK module is not published yet.
	sdkReplace string
	// prApply writes the opt-in workflow of /infra apply before merge.
	prApply bool
}

// sdkGoVersion is the go line of the SDK's own go.mod (a test keeps them
// equal): a fleet program's module needs at least that Go.
const sdkGoVersion = "1.26.0"

// sdkPlaceholder is the version Go itself gives a module that only a
// replace line provides.
const sdkPlaceholder = "v0.0.0-00010101000000-000000000000"

func newInit(g *globals) *cobra.Command {
	opts := &initOptions{}
	c := &cobra.Command{
		Use:   "init [DIR]",
		Short: "Scaffold a fleet program, the CI workflows, a .gitignore for .infra/ and a git repository",
		Long: `init writes what a repository needs to use infra:

  go.mod                                the fleet program's module, requiring the SDK
                                        (unless DIR has one: then it is left alone)
  infra/main.go                         the fleet program: fleet.Main over infra/declare
  infra/declare/declare.go              the fleet: one example per kind, commented
  .github/workflows/infra-plan.yml      the plan on every pull request
  .github/workflows/infra-apply.yml     the reviewed plan applied on merge
  .github/workflows/infra-sweep.yml     nightly sweep of ci-tests- debris
  .github/workflows/infra-drift.yml     an issue while the live estate differs from main
  .github/workflows/infra-pr-apply.yml  with --pr-apply only: /infra apply on an approved
                                        pull request applies it before the merge
  .gitignore                            .infra/ (local state) added

It refuses to overwrite a file that exists and then writes nothing; .gitignore is
the exception: .infra/ is appended to it. A DIR in no git repository gets one
(git init, on branch main); one inside a repository is left in it. The SDK
module is not published yet: --sdk-replace DIR writes go.mod's replace line for
a checkout of it, and without it the next steps say how. See docs/ci.md.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			dir := "."
			if len(args) == 1 {
				dir = args[0]
			}
			return runInit(g, dir, opts)
		},
	}
	c.Flags().StringVar(&opts.name, "name", "", "the fleet's name (default: the directory's name, made valid)")
	c.Flags().StringVar(&opts.account, "aws-account", "123456789012", "the AWS account id the fleet is for")
	c.Flags().BoolVar(&opts.prApply, "pr-apply", false, "also write infra-pr-apply.yml: a /infra apply comment on an approved pull request applies its plan before the merge")
	c.Flags().StringVar(&opts.sdkReplace, "sdk-replace", "", "a checkout of the infra repository: go.mod replaces the SDK with it, while the module is not published")
	return c
}

// The fleet program init writes: a main package of one line and the
// package of its declarations (see mainTemplate).
var (
	mainPath    = filepath.Join("infra", "main.go")
	declarePath = filepath.Join("infra", "declare", "declare.go")
)

// scaffoldFile is one file init writes.
type scaffoldFile struct {
	path string
	data []byte
}

func runInit(g *globals, dir string, opts *initOptions) error {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	name := opts.name
	if name == "" {
		name = fleetNameFrom(filepath.Base(abs))
	}
	if !spec.ValidFleetName(name) {
		return usageError{fmt.Errorf("--name %q: a fleet name is 1-63 characters of a-z, 0-9, '-' and '_', starting with a letter", name)}
	}
	if !regexp.MustCompile(`^[0-9]{12}$`).MatchString(opts.account) {
		return usageError{fmt.Errorf("--aws-account %q: an AWS account id is 12 digits", opts.account)}
	}
	sc := scaffold{name: name, release: sdkRelease(currentVersion()), prApply: opts.prApply}
	if opts.sdkReplace != "" {
		if sc.sdkDir, err = sdkCheckout(opts.sdkReplace); err != nil {
			return usageError{fmt.Errorf("--sdk-replace %q: %w; give the directory of a checkout of the infra repository", opts.sdkReplace, err)}
		}
	}
	files, err := sc.files(dir, opts.account)
	if err != nil {
		return err
	}
	out := g.io().Out
	if err := writeNew(out, dir, files); err != nil {
		return err
	}
	added, err := ignoreState(filepath.Join(dir, ".gitignore"))
	if err != nil {
		return err
	}
	if added {
		fmt.Fprintln(out, "added .infra/ to .gitignore")
	}
	if err := initRepository(g.io(), dir); err != nil {
		return err
	}
	sc.nextSteps(out, dir)
	return nil
}

// initRepository runs git init in dir when dir is in no git repository:
// actionlint finds the project by its .git, and the workflows' paths are
// the repository's. It never makes a repository inside another, and
// without git it says so and leaves the rest done. The branch is main,
// the one infra-apply.yml applies, unless init.defaultBranch says another.
func initRepository(io *IOStreams, dir string) error {
	git, err := exec.LookPath("git")
	if err != nil {
		fmt.Fprintln(io.ErrOut, "warning: git is not installed: init ran no git init; run it here before the first push (the workflows and actionlint need a repository)")
		return nil
	}
	run := func(args ...string) (string, error) {
		cmd := exec.Command(git, args...)
		cmd.Dir = dir
		// git's messages in English: one of them is read below.
		cmd.Env = append(os.Environ(), "LC_ALL=C")
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil {
			return "", fmt.Errorf("git %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
		}
		return strings.TrimSpace(stdout.String()), nil
	}
	// It succeeds in a work tree and in a git directory (where dir is not
	// ours to touch), and fails with "not a git repository" outside both.
	_, err = run("rev-parse", "--is-inside-work-tree")
	if err == nil {
		return nil
	}
	if !strings.Contains(err.Error(), "not a git repository") {
		// Such as a repository above dir that git refuses to read
		// (safe.directory): it is a repository all the same.
		fmt.Fprintf(io.ErrOut, "warning: init ran no git init: %v\n", err)
		return nil
	}
	args := []string{"init", "-q"}
	if b, _ := run("config", "--get", "init.defaultBranch"); b == "" {
		args = append([]string{"-c", "init.defaultBranch=main"}, args...)
	}
	if _, err := run(args...); err != nil {
		return fmt.Errorf("%w; the files are written: run git init in %s yourself", err, dir)
	}
	branch, err := run("symbolic-ref", "--short", "HEAD")
	if err != nil {
		return err
	}
	fmt.Fprintf(io.Out, "ran git init (branch %s): the directory was in no git repository, and the workflows and actionlint need one\n", branch)
	return nil
}

// scaffold is what init writes for one fleet.
type scaffold struct {
	name string
	// release is the SDK version this build is (empty when unpublished);
	// sdkDir a checkout to replace it with.
	release, sdkDir string
	// userModule is the module of a go.mod that was there already, which
	// the fleet program joins; empty when init writes one.
	userModule string
	// prApply adds the opt-in workflows (workflows.OptIn).
	prApply bool
}

// files lists what init writes, and checks none of it exists: everything
// is checked before anything is written, so a refusal leaves the directory
// as it was.
func (sc *scaffold) files(dir, account string) ([]scaffoldFile, error) {
	var files []scaffoldFile
	userModule, err := moduleOf(filepath.Join(dir, "go.mod"))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("%w; init reads it for the module the fleet program joins: fix it, or run init in another directory", err)
	}
	sc.userModule = userModule
	module := userModule
	if err != nil {
		module = sc.name
		files = append(files, scaffoldFile{path: "go.mod", data: goMod(sc.name, sc.release, sc.sdkDir)})
	}
	data := struct{ Name, Account, Module string }{sc.name, account, module}
	for _, t := range []struct {
		path string
		tmpl *template.Template
	}{{mainPath, mainTemplate}, {declarePath, declareTemplate}} {
		var b bytes.Buffer
		if err := t.tmpl.Execute(&b, data); err != nil {
			return nil, err
		}
		files = append(files, scaffoldFile{path: t.path, data: b.Bytes()})
	}
	for _, n := range workflows.Names {
		if workflows.OptIn[n] && !sc.prApply {
			continue
		}
		b, err := workflows.Files.ReadFile(n)
		if err != nil {
			return nil, err
		}
		files = append(files, scaffoldFile{path: filepath.Join(".github", "workflows", "infra-"+n), data: b})
	}
	var exist []string
	for _, f := range files {
		if _, err := os.Lstat(filepath.Join(dir, f.path)); err == nil {
			exist = append(exist, f.path)
		} else if !errors.Is(err, os.ErrNotExist) {
			return nil, err
		}
	}
	if len(exist) > 0 {
		return nil, fmt.Errorf("refusing to overwrite %s; move them away or write the rest by hand (docs/ci.md shows every file)", strings.Join(exist, ", "))
	}
	return files, nil
}

// writeNew writes each file, never over one that appeared since the check.
func writeNew(out io.Writer, dir string, files []scaffoldFile) error {
	for _, f := range files {
		path := filepath.Join(dir, f.path)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return err
		}
		w, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if err != nil {
			return err
		}
		_, werr := w.Write(f.data)
		if cerr := w.Close(); werr == nil {
			werr = cerr
		}
		if werr != nil {
			return werr
		}
		fmt.Fprintf(out, "wrote %s\n", filepath.ToSlash(f.path))
	}
	return nil
}

// nextSteps says what to run next, aligned.
func (sc *scaffold) nextSteps(out io.Writer, dir string) {
	fmt.Fprintf(out, "\nFleet %s is in infra/: declared in infra/declare/declare.go, run by infra/main.go. ", sc.name)
	var steps [][2]string
	if dir != "." {
		// Every step after it is relative to the project.
		steps = append(steps, [2]string{"cd " + shellQuote(dir), "the project"})
	}
	replace := [2]string{"go mod edit -replace " + sdkModule + "=/path/to/infra", "the SDK is not published yet: use a checkout of it"}
	switch {
	case sc.userModule != "":
		fmt.Fprintf(out, "It is in module %s (its go.mod was there already; init left it as it was). Next:\n", sc.userModule)
		if sc.sdkDir != "" {
			steps = append(steps, [2]string{"go mod edit -replace " + sdkModule + "=" + shellQuote(sc.sdkDir), "the SDK from your checkout, until the module is published"})
		} else if sc.release != "" {
			steps = append(steps, [2]string{"go get " + sdkModule + "@" + sc.release, "the SDK"})
		} else {
			steps = append(steps, replace)
		}
	case sc.sdkDir != "":
		fmt.Fprintf(out, "go.mod makes it module %s, with the SDK from %s. Next:\n", sc.name, sc.sdkDir)
	default:
		fmt.Fprintf(out, "go.mod makes it module %s. Next:\n", sc.name)
		if sc.release == "" {
			steps = append(steps, replace)
		}
	}
	steps = append(steps,
		[2]string{"go mod tidy", "the SDK's dependencies, into go.mod and go.sum"},
		[2]string{"go run ./infra check", "offline: is the fleet valid?"},
		[2]string{"go run ./infra plan", "what apply would do"})
	width := 0
	for _, s := range steps {
		width = max(width, len(s[0]))
	}
	for _, s := range steps {
		fmt.Fprintf(out, "  %-*s  # %s\n", width, s[0], s[1])
	}
	if sc.sdkDir == "" && sc.release == "" {
		fmt.Fprintln(out, "(init --sdk-replace DIR writes that replace line itself.)")
	}
	fmt.Fprintln(out, "Then set the repository variables the workflows read (docs/ci.md).")
}

// goMod is the fleet program's go.mod: the SDK at release, or at the
// placeholder with a replace by the checkout sdkDir.
func goMod(module, release, sdkDir string) []byte {
	version := release
	if version == "" {
		version = sdkPlaceholder
	}
	var b strings.Builder
	fmt.Fprintf(&b, `// The fleet program's module (infra/). Renaming it means renaming the
// import of infra/declare in infra/main.go; nothing else depends on it.
module %s

go %s

require %s %s
`, module, sdkGoVersion, sdkModule, version)
	if sdkDir != "" {
		fmt.Fprintf(&b, `
// A checkout of the SDK on this machine, until the module is published.
// CI cannot build with a path that exists only here: drop this line then.
replace %s => %s
`, sdkModule, modQuote(sdkDir))
	}
	return []byte(b.String())
}

// sdkCheckout returns dir, absolute, once its go.mod is the SDK's.
func sdkCheckout(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	gomod := filepath.Join(abs, "go.mod")
	m, err := moduleOf(gomod)
	if err != nil {
		return "", err
	}
	if m != sdkModule {
		return "", fmt.Errorf("%s is not the module %s but %s", gomod, sdkModule, m)
	}
	return abs, nil
}

// moduleOf reads the module path of a go.mod.
func moduleOf(gomod string) (string, error) {
	b, err := os.ReadFile(gomod)
	if err != nil {
		return "", err
	}
	for _, l := range strings.Split(string(b), "\n") {
		l, _, _ = strings.Cut(l, "//")
		if rest, ok := strings.CutPrefix(strings.TrimSpace(l), "module"); ok && rest != "" && (rest[0] == ' ' || rest[0] == '\t' || rest[0] == '"') {
			return strings.Trim(strings.TrimSpace(rest), `"`), nil
		}
	}
	return "", fmt.Errorf("%s has no module line", gomod)
}

var pseudoVersion = regexp.MustCompile(`-[0-9]{14}-[0-9a-f]{12}$`)

// sdkRelease is the version of the SDK a go.mod can require through the
// module proxy: this binary's own, when it came from there. It is empty
// for a build of a checkout ((devel), or the pseudo-version go build
// stamps from a local commit nobody may have pushed), a dirty build, and
// a fleet program whose go.mod replaces the SDK.
func sdkRelease(v versionInfo) string {
	switch {
	case !strings.HasPrefix(v.Version, "v"), strings.Contains(v.Version, "+"), v.Version == sdkPlaceholder, v.Replace != "":
		return ""
	case v.Program == "" && v.Commit != "" && pseudoVersion.MatchString(v.Version):
		return ""
	}
	return v.Version
}

// shellQuote quotes s for a POSIX shell when it needs it.
func shellQuote(s string) string {
	if regexp.MustCompile(`^[A-Za-z0-9/._+=:@-]+$`).MatchString(s) {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// modQuote quotes a path for go.mod when it needs it.
func modQuote(s string) string {
	if strings.ContainsAny(s, " \t\"'`\\") {
		return strconv.Quote(s)
	}
	return s
}

// ignoreState makes .gitignore ignore .infra/, the local state directory:
// it appends the line (creating the file) unless a line already does.
func ignoreState(path string) (bool, error) {
	old, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return false, err
	}
	for _, l := range strings.Split(string(old), "\n") {
		switch strings.TrimSpace(l) {
		case ".infra", ".infra/", "/.infra", "/.infra/":
			return false, nil
		}
	}
	add := "# infra's local state (docs/state.md)\n.infra/\n"
	if len(old) > 0 && !bytes.HasSuffix(old, []byte("\n")) {
		add = "\n" + add
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return false, err
	}
	_, werr := f.WriteString(add)
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	return werr == nil, werr
}

// fleetNameFrom makes a directory's name a valid fleet name.
func fleetNameFrom(base string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(base) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9', r == '-', r == '_':
			b.WriteRune(r)
		case r == ' ' || r == '.':
			b.WriteRune('-')
		}
	}
	name := strings.TrimLeft(b.String(), "0123456789-_")
	if len(name) > 40 {
		name = name[:40]
	}
	if name == "" {
		return "fleet"
	}
	return name
}

// The fleet program is two packages: infra/main.go, a main package of one
// line, and infra/declare, the declarations. With a main package alone
// among ./..., go build ./... writes a binary named after its directory,
// infra, over the directory itself, and fails; with two packages it writes
// none. mainTemplate is infra/main.go; Module is the module it is in.
var mainTemplate = template.Must(template.New("main.go").Delims("[[", "]]").Parse(`// Command infra is the program of fleet [[.Name]]: every infra verb
// (fleet.Main) over the fleet that package declare declares, in
// infra/declare/declare.go. Pull requests show its plan; a merge applies
// the reviewed plan (.github/workflows/infra-*.yml, docs/ci.md).
//
//	go run ./infra check   # offline: is the fleet valid?
//	go run ./infra plan    # what apply would do
//	go run ./infra apply   # do it (CI does this on merge)
//
// The declarations are a package of their own so that go build ./... has
// two packages to build and writes no binary: with this main package
// alone it would write one named infra, over this directory, and fail.
package main

import (
	"github.com/infra-iac/infra/fleet"

	"[[.Module]]/infra/declare"
)

func main() { fleet.Main(declare.Fleet()) }
`))

// declareTemplate is infra/declare/declare.go. Each example is a function
// of its own, called from Fleet: the examples always compile (a test
// builds them), and using one is uncommenting one line.
var declareTemplate = template.Must(template.New("declare.go").Delims("[[", "]]").Parse(`// Package declare declares fleet [[.Name]]: the cloud resources of this
// repository, which the program in infra/ plans and applies (go run
// ./infra plan).
//
// There is one example per kind below, each a function. Fleet calls the
// bucket's; uncomment a call to add that example, and plan shows what it
// would create. A resource's name is its identity: renaming one replaces it.
package declare

import (
	"github.com/infra-iac/infra/fleet"
	"github.com/infra-iac/infra/fleet/aws"
	"github.com/infra-iac/infra/fleet/scaleway"
)

// Fleet is fleet [[.Name]], declared.
func Fleet() *fleet.Fleet {
	// The name is the value of the ownership tag on everything the fleet
	// creates: renaming the fleet makes its resources foreign.
	f := fleet.New("[[.Name]]")
	// The AWS account the fleet is for, checked against the credentials
	// before anything is listed, and the default region.
	cloud := aws.Use(f, "[[.Account]]", aws.Paris)

	assets(cloud) // object-store
	// auditLogs(cloud)  // s3-bucket
	// jobs(cloud)       // queues
	// database(cloud)   // secrets and postgres
	// deployer(cloud)   // iam
	// api(cloud)        // image-registry and compute
	// web(cloud)        // security-group and aws-instance
	// serverless(f)     // the Scaleway kinds (and a second cloud)
	// workers(f)        // a component, instantiated twice
	return f
}

// assets is an object-store: an S3 bucket here, the same spec on Scaleway.
// Versioning keeps every version of every object; deleting a non-empty
// bucket is refused unless ForceDestroy.
func assets(cloud *aws.Cloud) {
	cloud.ObjectStore("[[.Name]]-assets", fleet.ObjectStoreSpec{
		Versioning: fleet.Set(true),
		Tags:       map[string]string{"team": "web"},
	})
}

// auditLogs is an s3-bucket, the AWS-only kind for what object-store does
// not cover: object lock, so logs cannot be deleted before their time.
func auditLogs(cloud *aws.Cloud) {
	cloud.S3Bucket("[[.Name]]-audit-logs", aws.S3BucketSpec{
		Versioning: fleet.Set(true),
		ObjectLock: fleet.Set(true),
	})
}

// jobs is a queues resource: an SQS queue.
func jobs(cloud *aws.Cloud) {
	cloud.Queues("[[.Name]]-jobs", fleet.QueuesSpec{VisibilityTimeoutSec: fleet.Set(60)})
}

// database is a secrets resource holding a password, a postgres cluster
// (Aurora Serverless v2) that uses it, and a second secret composed at
// apply time from the password and the cluster's endpoint. The password
// never lives in the repository: it is read from DB_PASSWORD in the
// environment of whoever applies (the executor's, in CI). Plans and
// comments show a secret's value as (sensitive).
func database(cloud *aws.Cloud) {
	password := cloud.Secrets("[[.Name]]-db-password", fleet.FromEnv("DB_PASSWORD"), fleet.SecretsSpec{})
	db := cloud.Postgres("[[.Name]]-db", "dbadmin", password, fleet.PostgresSpec{
		MinCapacity: fleet.Set(0.5),
		MaxCapacity: fleet.Set(2.0),
	})
	cloud.Secrets("[[.Name]]-db-url",
		fleet.Composed("postgres://dbadmin:{}@{}/main", aws.SecretValueOf(password), aws.EndpointOf(db)),
		fleet.SecretsSpec{Description: fleet.Set("connection string of [[.Name]]-db")})
}

// deployer is an iam resource: an IAM user with managed policies attached.
func deployer(cloud *aws.Cloud) {
	cloud.IAM("[[.Name]]-deployer", fleet.IAMSpec{
		Policies: []string{"arn:aws:iam::aws:policy/ReadOnlyAccess"},
	})
}

// api is an image-registry (ECR) and a compute resource (Lambda from a
// container image) that runs the image pushed there. The image's URI is
// known only after the registry exists, so it is an Output.
func api(cloud *aws.Cloud) {
	registry := cloud.ImageRegistry("[[.Name]]-api", fleet.ImageRegistrySpec{ImmutableTags: fleet.Set(true)})
	cloud.Compute("[[.Name]]-api",
		fleet.Format("{}:v1", aws.URIOf(registry)),
		fleet.Lit("arn:aws:iam::[[.Account]]:role/[[.Name]]-api"),
		fleet.ComputeSpec{
			MemoryMB:   fleet.Set(512),
			TimeoutSec: fleet.Set(30),
			Env:        fleet.Literals(map[string]string{"LOG_LEVEL": "info"}),
		})
}

// web is a security-group open on 443 and an aws-instance (EC2) in it. The
// instance type is checked by the compiler: there is no aws.T3.X32Large.
func web(cloud *aws.Cloud) {
	sg := cloud.SecurityGroup("[[.Name]]-web", "[[.Name]] web tier", aws.SecurityGroupSpec{
		Ingress: []aws.Ingress{{Port: 443, CIDR: "0.0.0.0/0"}},
	})
	cloud.Instance("[[.Name]]-web-1", "ami-0123456789abcdef0", aws.T3.Micro(), sg, aws.InstanceSpec{})
}

// serverless adds Scaleway to the fleet (a project id and a default
// region) with its own kinds: a functions namespace and a function in it,
// a containers namespace and a container in it.
func serverless(f *fleet.Fleet) {
	scw := scaleway.Use(f, "11111111-2222-3333-4444-555555555555", scaleway.Paris)
	fns := scw.FunctionNamespace("[[.Name]]-functions", scaleway.FunctionNamespaceSpec{})
	scw.Function("[[.Name]]-hello", fns, "go122", scaleway.FunctionSpec{})
	containers := scw.ContainerNamespace("[[.Name]]-containers", scaleway.ContainerNamespaceSpec{})
	scw.Container("[[.Name]]-worker", containers, fleet.Lit("rg.fr-par.scw.cloud/[[.Name]]/worker:v1"), scaleway.ContainerSpec{})
}

// workers instantiates the worker component twice (docs/components.md):
// each instance's resources are named after it, and a setting reaches a
// member directly, here the results bucket of "reports".
func workers(f *fleet.Fleet) {
	fleet.Instantiate(f, "[[.Name]]-emails", worker, workerSettings{VisibilityTimeoutSec: 30})
	fleet.Instantiate(f, "[[.Name]]-reports", worker, workerSettings{VisibilityTimeoutSec: 300},
		fleet.Settings("results", fleet.ObjectStoreSpec{ForceDestroy: fleet.Set(true)}))
}

// workerSettings are the worker component's own settings.
type workerSettings struct{ VisibilityTimeoutSec int }

// workerAsk is what the worker's ask half returns, for its receive half:
// its settings. It needs nothing from another fleet and has no
// sub-components; a component that reads a database declares its slot
// here (fleet.Need).
type workerAsk struct{ Settings workerSettings }

// worker is a component: a queue of jobs and a bucket for their results.
// Its ask half sees only its settings; its receive half declares the
// resources. The results bucket's versioning is fixed: an instance that
// sets it gets a row naming this line and its own.
var worker = fleet.DefineComponent("worker",
	func(s workerSettings) workerAsk { return workerAsk{Settings: s} },
	func(b *fleet.Body, x workerAsk) {
		cloud := aws.Use(b.Fleet(), "", "")
		cloud.Queues("jobs", fleet.QueuesSpec{VisibilityTimeoutSec: fleet.Set(x.Settings.VisibilityTimeoutSec)})
		cloud.ObjectStore("results", fleet.ObjectStoreSpec{Versioning: fleet.Set(true)})
	},
	fleet.Fixed("results.versioning"))
`))
