package scwfake

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
)

// RegionProxy stands between Scaleway's S3 and SQS clients and
// moto_server, which knows AWS regions only. It renames Scaleway regions
// to AWS ones on the way in (the SigV4 credential scope, bodies) and back
// on the way out, so that each Scaleway region is a separate moto region.
// Scaleway creates a bucket in the region of the endpoint it is sent to,
// with no body; moto wants a LocationConstraint outside us-east-1, so the
// proxy adds it.
type RegionProxy struct {
	*httptest.Server
	target *url.URL
}

// Regions maps each Scaleway region to the moto region that stands for it.
var Regions = map[string]string{"fr-par": "eu-west-3", "nl-ams": "eu-west-1", "pl-waw": "eu-central-1"}

// StartRegionProxy starts a proxy to the moto_server at motoURL.
func StartRegionProxy(motoURL string) (*RegionProxy, error) {
	u, err := url.Parse(motoURL)
	if err != nil {
		return nil, err
	}
	p := &RegionProxy{target: u}
	p.Server = httptest.NewServer(http.HandlerFunc(p.serve))
	return p, nil
}

func toAWS(s string) string {
	for scw, aws := range Regions {
		s = strings.ReplaceAll(s, "/"+scw+"/", "/"+aws+"/")
	}
	return s
}

func toScaleway(b []byte) []byte {
	for scw, aws := range Regions {
		b = bytes.ReplaceAll(b, []byte(aws), []byte(scw))
	}
	return b
}

func (p *RegionProxy) serve(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	auth := r.Header.Get("Authorization")
	region := ""
	if i := strings.Index(auth, "Credential="); i >= 0 {
		parts := strings.Split(auth[i:], "/")
		if len(parts) > 2 {
			region = parts[2]
		}
	}
	awsRegion := Regions[region]
	for scw, aws := range Regions {
		body = bytes.ReplaceAll(body, []byte(`"`+scw+`"`), []byte(`"`+aws+`"`))
		body = bytes.ReplaceAll(body, []byte(">"+scw+"<"), []byte(">"+aws+"<"))
	}
	// CreateBucket: PUT /<bucket> with no sub-resource and no body.
	segs := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
	if r.Method == http.MethodPut && len(segs) == 1 && segs[0] != "" && r.URL.RawQuery == "" && len(body) == 0 &&
		awsRegion != "" && r.Header.Get("X-Amz-Target") == "" {
		body = []byte(`<CreateBucketConfiguration xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><LocationConstraint>` +
			awsRegion + `</LocationConstraint></CreateBucketConfiguration>`)
	}
	uri := r.URL.RequestURI()
	for scw, aws := range Regions {
		uri = strings.ReplaceAll(uri, "="+scw, "="+aws)
	}
	out, err := http.NewRequestWithContext(r.Context(), r.Method, p.target.String()+uri, bytes.NewReader(body))
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	for k, vs := range r.Header {
		for _, v := range vs {
			out.Header.Add(k, toAWS(v))
		}
	}
	out.Header.Set("Content-Length", strconv.Itoa(len(body)))
	out.Header.Del("X-Amz-Content-Sha256")
	out.ContentLength = int64(len(body))
	resp, err := http.DefaultTransport.RoundTrip(out)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	defer resp.Body.Close()
	rb, _ := io.ReadAll(resp.Body)
	rb = toScaleway(rb)
	for k, vs := range resp.Header {
		if k == "Content-Length" {
			continue
		}
		for _, v := range vs {
			w.Header().Add(k, string(toScaleway([]byte(v))))
		}
	}
	w.Header().Set("Content-Length", strconv.Itoa(len(rb)))
	w.WriteHeader(resp.StatusCode)
	_, _ = w.Write(rb)
}
