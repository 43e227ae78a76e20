package scaleway

import (
	"archive/zip"
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	function "github.com/scaleway/scaleway-sdk-go/api/function/v1beta1"
	"github.com/scaleway/scaleway-sdk-go/scw"

	"github.com/infra-iac/infra/providers"
	"github.com/infra-iac/infra/spec"
)

// sourceBucketEnv is the variable a function reads its source bucket from.
const sourceBucketEnv = "SOURCE_BUCKET"

// functions is scaleway-function: a function in a Functions namespace,
// owned through its tags. Its namespace is reported by name. Inline code
// is zipped deterministically, uploaded to the presigned URL the API
// gives, and deployed at create; a function without code stays "created".
type functions struct {
	b   *Backend
	api *function.API
	ns  *namespaces
}

var (
	_ providers.Driver   = (*functions)(nil)
	_ providers.Releaser = (*functions)(nil)
)

func init() {
	register(entry{kind: spec.ScalewayFunction, new: func(b *Backend) providers.Driver {
		api := function.NewAPI(b.client)
		return &functions{b: b, api: api, ns: newFunctionNamespaces(b, api)}
	}})
}

// all lists every function of the project in region: per namespace, since
// functions belong to one, each listing carrying the project.
func (d *functions) all(ctx context.Context, region string, name *string) ([]*function.Function, map[string]string, error) {
	project, _, err := d.b.scope(ctx)
	if err != nil {
		return nil, nil, err
	}
	nss, err := d.ns.all(ctx, region, nil)
	if err != nil {
		return nil, nil, err
	}
	names := map[string]string{}
	var out []*function.Function
	for _, ns := range nss {
		names[ns.id] = ns.name
		fs, err := allPages(ctx, spec.ScalewayFunction, region, func(page int32) ([]*function.Function, uint64, error) {
			res, err := d.api.ListFunctions(&function.ListFunctionsRequest{Region: scw.Region(region), NamespaceID: ns.id,
				ProjectID: &project, Name: name, Page: &page, PageSize: &d.b.opts.PageSize,
				OrderBy: function.ListFunctionsRequestOrderByCreatedAtAsc}, scw.WithContext(ctx))
			if err != nil {
				return nil, 0, err
			}
			return res.Functions, uint64(res.TotalCount), nil
		})
		if err != nil {
			return nil, nil, err
		}
		for _, f := range fs {
			if f.Status != function.FunctionStatusDeleting {
				out = append(out, f)
			}
		}
	}
	return out, names, nil
}

func (d *functions) find(ctx context.Context, region, name string) (*function.Function, map[string]string, error) {
	fs, names, err := d.all(ctx, region, &name)
	if err != nil {
		return nil, nil, err
	}
	f, err := byName(spec.ScalewayFunction, region, name, fs, func(f *function.Function) string { return f.Name })
	return f, names, err
}

func functionResource(region string, f *function.Function, namespaces map[string]string) providers.Resource {
	tags, owner := readTags(f.Tags)
	env := map[string]any{}
	fields := map[string]any{spec.TagsField: tags, "runtime": string(f.Runtime), "handler": f.Handler}
	for k, v := range f.EnvironmentVariables {
		if k == sourceBucketEnv {
			fields["sourceBucket"] = v
			continue
		}
		env[k] = v
	}
	fields["env"] = env
	if ns, ok := namespaces[f.NamespaceID]; ok {
		fields["namespace"] = ns
	}
	r := providers.Resource{Name: f.Name, Region: region, Owner: owner, Complete: true, Fields: fields,
		Attributes: map[string]string{"id": f.ID}}
	if f.DomainName != "" {
		r.Attributes["url"] = "https://" + f.DomainName
	}
	if f.CreatedAt != nil {
		r.Created = *f.CreatedAt
	}
	return r
}

func (d *functions) List(ctx context.Context, region string) ([]providers.Resource, error) {
	fs, names, err := d.all(ctx, region, nil)
	if err != nil {
		return nil, err
	}
	out := make([]providers.Resource, 0, len(fs))
	for _, f := range fs {
		out = append(out, functionResource(region, f, names))
	}
	return out, nil
}

func (d *functions) Read(ctx context.Context, region, name string) (providers.Resource, error) {
	f, names, err := d.find(ctx, region, name)
	if err != nil {
		return providers.Resource{}, err
	}
	return functionResource(region, f, names), nil
}

// functionEnv is the environment a function gets: env plus SOURCE_BUCKET.
func functionEnv(decl providers.ScalewayFunctionInput) (map[string]string, error) {
	env := decl.Env
	if _, clash := env[sourceBucketEnv]; clash {
		return nil, providers.Errorf(providers.InvalidArgument, "env sets %s, which sourceBucket owns; use sourceBucket", sourceBucketEnv)
	}
	if b := decl.SourceBucket; b != "" {
		env[sourceBucketEnv] = b
	}
	return env, nil
}

func (d *functions) Create(ctx context.Context, t providers.Target) (providers.Resource, error) {
	decl, err := providers.DecodeScalewayFunction(t.Fields)
	if err != nil {
		return providers.Resource{}, err
	}
	nsName, runtime := decl.Namespace, decl.Runtime
	if nsName == "" || runtime == "" {
		return providers.Resource{}, providers.Errorf(providers.InvalidArgument, "scaleway-function needs namespace and runtime")
	}
	ns, err := d.ns.find(ctx, t.Region, nsName)
	if err != nil {
		return providers.Resource{}, fmt.Errorf("namespace %s: %w", nsName, err)
	}
	tags, err := tagList(t)
	if err != nil {
		return providers.Resource{}, err
	}
	env, err := functionEnv(decl)
	if err != nil {
		return providers.Resource{}, err
	}
	code, handler := decl.Code, decl.Handler
	var archive []byte
	if code != "" {
		if archive, err = zipCode(runtime, handler, code); err != nil {
			return providers.Resource{}, err
		}
	}
	// Every enum is set: the SDK would send an unset one as "unknown_…",
	// which the API refuses.
	req := &function.CreateFunctionRequest{Region: scw.Region(t.Region), Name: t.Name, NamespaceID: ns.id,
		Runtime: function.FunctionRuntime(runtime), Privacy: function.FunctionPrivacyPublic,
		HTTPOption: function.FunctionHTTPOptionEnabled, Sandbox: function.FunctionSandboxV2, Tags: tags,
		EnvironmentVariables: &env, SecretEnvironmentVariables: []*function.Secret{}}
	if handler != "" {
		req.Handler = &handler
	}
	f, err := d.api.CreateFunction(req, scw.WithContext(ctx))
	if err != nil {
		return providers.Resource{}, err
	}
	if archive != nil {
		if err := d.deploy(ctx, t.Region, f.ID, archive); err != nil {
			return providers.Resource{}, err
		}
	}
	return d.waitReady(ctx, t.Region, f.ID, t.Name, map[string]string{ns.id: ns.name})
}

// deploy uploads the archive to the presigned URL and deploys it.
func (d *functions) deploy(ctx context.Context, region, id string, archive []byte) error {
	u, err := d.api.GetFunctionUploadURL(&function.GetFunctionUploadURLRequest{Region: scw.Region(region), FunctionID: id,
		ContentLength: uint64(len(archive))}, scw.WithContext(ctx))
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPut, u.URL, bytes.NewReader(archive))
	if err != nil {
		return err
	}
	for k, vs := range u.Headers {
		if vs != nil && len(*vs) > 0 {
			req.Header.Set(k, (*vs)[0])
		}
	}
	req.Header.Set("Content-Type", "application/octet-stream")
	req.ContentLength = int64(len(archive))
	resp, err := d.b.opts.HTTPClient.Do(req)
	if err != nil {
		return fmt.Errorf("upload the function code: %w", err)
	}
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("upload the function code: %s: %s", resp.Status, strings.TrimSpace(string(body)))
	}
	_, err = d.api.DeployFunction(&function.DeployFunctionRequest{Region: scw.Region(region), FunctionID: id}, scw.WithContext(ctx))
	return err
}

// zipCode packs inline source as the handler's module, with a fixed
// timestamp so the same code always gives the same archive.
func zipCode(runtime, handler, code string) ([]byte, error) {
	module, _, _ := strings.Cut(handler, ".")
	if module == "" {
		module = "handler"
	}
	var ext string
	switch {
	case strings.HasPrefix(runtime, "node"):
		ext = ".js"
	case strings.HasPrefix(runtime, "python"):
		ext = ".py"
	case strings.HasPrefix(runtime, "php"):
		ext = ".php"
	case strings.HasPrefix(runtime, "go"):
		ext = ".go"
	default:
		return nil, providers.Errorf(providers.InvalidArgument, "inline code for runtime %s is not supported: use a node, python, php or go runtime", runtime)
	}
	var buf bytes.Buffer
	w := zip.NewWriter(&buf)
	hdr := &zip.FileHeader{Name: module + ext, Method: zip.Deflate, Modified: time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)}
	f, err := w.CreateHeader(hdr)
	if err != nil {
		return nil, err
	}
	if _, err := f.Write([]byte(code)); err != nil {
		return nil, err
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func (d *functions) waitReady(ctx context.Context, region, id, name string, names map[string]string) (providers.Resource, error) {
	timeout, interval := d.b.wait()
	d.b.progress("scaleway/%s/%s: waiting for the function", spec.ScalewayFunction, name)
	f, err := d.api.WaitForFunction(&function.WaitForFunctionRequest{Region: scw.Region(region), FunctionID: id,
		Timeout: timeout, RetryInterval: interval}, scw.WithContext(ctx))
	if err != nil {
		return providers.Resource{}, err
	}
	if f.Status == function.FunctionStatusError {
		return providers.Resource{}, providers.Errorf(providers.Conflict, "scaleway/%s/%s: function is in error: %s %s", spec.ScalewayFunction, name, deref(f.ErrorMessage), deref(f.BuildMessage))
	}
	d.b.progress("scaleway/%s/%s: %s", spec.ScalewayFunction, name, f.Status)
	return functionResource(region, f, names), nil
}

func (d *functions) Update(ctx context.Context, t providers.Target, changed []string) (providers.Resource, error) {
	f, names, err := d.find(ctx, t.Region, t.Name)
	if err != nil {
		return providers.Resource{}, err
	}
	// The enums are sent back as they are: unset, the SDK would send
	// "unknown_…".
	req := &function.UpdateFunctionRequest{Region: scw.Region(t.Region), FunctionID: f.ID, Runtime: f.Runtime,
		Privacy: f.Privacy, HTTPOption: f.HTTPOption, Sandbox: f.Sandbox}
	decl, err := providers.DecodeScalewayFunction(t.Fields)
	if err != nil {
		return providers.Resource{}, err
	}
	for _, name := range changed {
		switch name {
		case providers.ScalewayFunctionEnv, providers.ScalewayFunctionSourceBucket:
			env, err := functionEnv(decl)
			if err != nil {
				return providers.Resource{}, err
			}
			if !decl.HasSourceBucket() {
				if b, ok := f.EnvironmentVariables[sourceBucketEnv]; ok {
					env[sourceBucketEnv] = b
				}
			}
			if !decl.HasEnv() {
				for k, v := range f.EnvironmentVariables {
					if k != sourceBucketEnv {
						env[k] = v
					}
				}
			}
			req.EnvironmentVariables = &env
		case providers.ScalewayFunctionHandler:
			req.Handler = &decl.Handler
		case spec.TagsField:
			tags, err := tagList(t)
			if err != nil {
				return providers.Resource{}, err
			}
			req.Tags = &tags
		default:
			return providers.Resource{}, providers.Errorf(providers.InvalidArgument, "scaleway-function: field %q cannot be updated in place", name)
		}
	}
	if _, err := d.api.UpdateFunction(req, scw.WithContext(ctx)); err != nil {
		return providers.Resource{}, err
	}
	return d.waitReady(ctx, t.Region, f.ID, t.Name, names)
}

func (d *functions) Delete(ctx context.Context, t providers.Target) error {
	f, _, err := d.find(ctx, t.Region, t.Name)
	if err != nil {
		return err
	}
	if _, err := d.api.DeleteFunction(&function.DeleteFunctionRequest{Region: scw.Region(t.Region), FunctionID: f.ID}, scw.WithContext(ctx)); err != nil {
		return err
	}
	return d.b.awaitDeletion(spec.ScalewayFunction, t.Name, false, func(timeout, interval *time.Duration) error {
		_, err := d.api.WaitForFunction(&function.WaitForFunctionRequest{Region: scw.Region(t.Region), FunctionID: f.ID,
			Timeout: timeout, RetryInterval: interval}, scw.WithContext(ctx))
		return err
	})
}

func (d *functions) Release(ctx context.Context, region, name, owner string) error {
	f, _, err := d.find(ctx, region, name)
	if err != nil {
		return err
	}
	tags, found := withoutOwner(f.Tags, owner)
	if !found {
		return nil
	}
	_, err = d.api.UpdateFunction(&function.UpdateFunctionRequest{Region: scw.Region(region), FunctionID: f.ID, Runtime: f.Runtime,
		Privacy: f.Privacy, HTTPOption: f.HTTPOption, Sandbox: f.Sandbox, Tags: &tags}, scw.WithContext(ctx))
	return err
}
