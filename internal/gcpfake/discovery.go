package gcpfake

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"runtime"
	"runtime/debug"
	"sort"
	"strings"
	"sync"
	"unicode"

	"google.golang.org/api/googleapi"
)

// apiModule is the module that ships the discovery documents, one
// <api>/<version>/<api>-api.json per API, beside the generated clients.
const apiModule = "google.golang.org/api"

// Doc is one parsed discovery document: the part of it the fake checks
// against.
type Doc struct {
	Name        string                `json:"name"`
	Version     string                `json:"version"`
	RootURL     string                `json:"rootUrl"`
	ServicePath string                `json:"servicePath"`
	Parameters  map[string]*Parameter `json:"parameters"`
	Schemas     map[string]*Schema    `json:"schemas"`
	Resources   map[string]*Resource  `json:"resources"`
	Methods     map[string]*Method    `json:"methods"`

	// methods are every method of every resource, by id.
	methods map[string]*Method
}

// Resource is a collection: its methods and sub-collections.
type Resource struct {
	Methods   map[string]*Method   `json:"methods"`
	Resources map[string]*Resource `json:"resources"`
}

// Method is one REST method.
type Method struct {
	ID         string                `json:"id"`
	HTTPMethod string                `json:"httpMethod"`
	Path       string                `json:"path"`
	FlatPath   string                `json:"flatPath"`
	Parameters map[string]*Parameter `json:"parameters"`
	Request    *Schema               `json:"request"`
	Response   *Schema               `json:"response"`

	doc *Doc
}

// Parameter is a path or query parameter: a schema with a location.
type Parameter struct {
	Schema
	Location string `json:"location"`
	Required bool   `json:"required"`
	Repeated bool   `json:"repeated"`
	Pattern  string `json:"pattern"`
}

// Schema is a JSON schema as discovery writes it.
type Schema struct {
	ID                   string             `json:"id"`
	Type                 string             `json:"type"`
	Format               string             `json:"format"`
	Ref                  string             `json:"$ref"`
	Enum                 []string           `json:"enum"`
	Properties           map[string]*Schema `json:"properties"`
	AdditionalProperties *Schema            `json:"additionalProperties"`
	Items                *Schema            `json:"items"`
	ReadOnly             bool               `json:"readOnly"`
}

// Method returns the method with that id (secretmanager.projects.secrets.get),
// or nil.
func (d *Doc) Method(id string) *Method { return d.methods[id] }

// MethodIDs lists the document's method ids, sorted.
func (d *Doc) MethodIDs() []string {
	ids := make([]string, 0, len(d.methods))
	for id := range d.methods {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	return ids
}

// Doc is the document the method belongs to.
func (m *Method) Doc() *Doc { return m.doc }

// docs caches parsed documents for the process: they are large (the
// Compute one is megabytes) and never change under a running binary.
var docs struct {
	sync.Mutex
	byKey map[string]*docEntry
}

type docEntry struct {
	once sync.Once
	doc  *Doc
	err  error
}

// LoadDoc returns the discovery document of an API version (secretmanager,
// v1) from the google.golang.org/api module this binary was built with,
// parsed once per process.
func LoadDoc(api, version string) (*Doc, error) {
	docs.Lock()
	if docs.byKey == nil {
		docs.byKey = map[string]*docEntry{}
	}
	e := docs.byKey[api+"/"+version]
	if e == nil {
		e = &docEntry{}
		docs.byKey[api+"/"+version] = e
	}
	docs.Unlock()
	e.once.Do(func() { e.doc, e.err = readDoc(api, version) })
	return e.doc, e.err
}

func readDoc(api, version string) (*Doc, error) {
	dir, err := apiModuleDir()
	if err != nil {
		return nil, err
	}
	file := filepath.Join(dir, api, version, api+"-api.json")
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("discovery document of %s %s: %w", api, version, err)
	}
	return parseDoc(b)
}

// parseDoc decodes a discovery document and indexes its methods.
func parseDoc(b []byte) (*Doc, error) {
	var d Doc
	if err := json.Unmarshal(b, &d); err != nil {
		return nil, fmt.Errorf("discovery document: %w", err)
	}
	d.methods = map[string]*Method{}
	add := func(ms map[string]*Method) {
		for _, m := range ms {
			m.doc = &d
			d.methods[m.ID] = m
		}
	}
	add(d.Methods)
	var walk func(map[string]*Resource)
	walk = func(rs map[string]*Resource) {
		for _, r := range rs {
			add(r.Methods)
			walk(r.Resources)
		}
	}
	walk(d.Resources)
	if len(d.methods) == 0 {
		return nil, errors.New("discovery document of " + d.Name + " has no methods")
	}
	return &d, nil
}

// moduleDir caches where google.golang.org/api lives: finding it may run
// the go command.
var moduleDir struct {
	once sync.Once
	dir  string
	err  error
}

// apiModuleDir finds google.golang.org/api without the network, the
// version this binary was built with first: from the build info's
// dependencies (a test binary has none: golang/go#76926), else from the
// source path the linker recorded for a function of the module, else
// whatever `go list -m` resolves from the working directory's module.
func apiModuleDir() (string, error) {
	moduleDir.once.Do(func() {
		for _, find := range []func() (string, bool){dirFromBuildInfo, dirFromLinkedSource} {
			if dir, ok := find(); ok {
				moduleDir.dir = dir
				return
			}
		}
		moduleDir.dir, moduleDir.err = dirFromGoList()
	})
	return moduleDir.dir, moduleDir.err
}

func dirFromBuildInfo() (string, bool) {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "", false
	}
	for _, dep := range bi.Deps {
		if dep.Path != apiModule {
			continue
		}
		if r := dep.Replace; r != nil {
			if r.Version == "" { // replaced by a directory
				return r.Path, isDir(r.Path)
			}
			dep = r
		}
		cache := modCache()
		if cache == "" {
			return "", false
		}
		dir := filepath.Join(cache, escapeModulePath(dep.Path)+"@"+dep.Version)
		return dir, isDir(dir)
	}
	return "", false
}

// dirFromLinkedSource reads the module directory off the file name the
// binary records for googleapi.CheckResponse:
// /root/go/pkg/mod/google.golang.org/api@v0.316.0/googleapi/googleapi.go,
// or, built with -trimpath, google.golang.org/api@v0.316.0/googleapi/…
// under the module cache.
func dirFromLinkedSource() (string, bool) {
	pc := reflect.ValueOf(googleapi.CheckResponse).Pointer()
	fn := runtime.FuncForPC(pc)
	if fn == nil {
		return "", false
	}
	file, _ := fn.FileLine(pc)
	file = filepath.ToSlash(file)
	at := escapeModulePath(apiModule) + "@"
	i := strings.LastIndex(file, at)
	if i < 0 {
		return "", false
	}
	version, _, ok := strings.Cut(file[i+len(at):], "/")
	if !ok {
		return "", false
	}
	dir := filepath.FromSlash(file[:i+len(at)] + version)
	if !filepath.IsAbs(dir) {
		dir = filepath.Join(modCache(), dir)
	}
	return dir, isDir(dir)
}

// modCache is GOMODCACHE from the environment, else from the go command
// (which knows the GOPATH default).
func modCache() string {
	if c := os.Getenv("GOMODCACHE"); c != "" {
		return c
	}
	out, err := exec.Command("go", "env", "GOMODCACHE").Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}

func dirFromGoList() (string, error) {
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", apiModule).Output()
	if err != nil {
		return "", fmt.Errorf("locating %s: go list -m: %w", apiModule, err)
	}
	dir := strings.TrimSpace(string(out))
	if dir == "" {
		return "", fmt.Errorf("locating %s: not in the module cache (go mod download %s)", apiModule, apiModule)
	}
	return dir, nil
}

// escapeModulePath is the module cache's case encoding: an upper-case
// letter becomes '!' and its lower case.
func escapeModulePath(p string) string {
	var b strings.Builder
	for _, r := range p {
		if unicode.IsUpper(r) {
			b.WriteByte('!')
			r = unicode.ToLower(r)
		}
		b.WriteRune(r)
	}
	return b.String()
}

func isDir(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}
