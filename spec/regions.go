package spec

import "sort"

// Locality is a place, named before any cloud names it. Each cloud maps it
// to its own region code, or to nothing: AWS has no Warsaw, Scaleway no
// Ireland, GCP no Amsterdam (its Dutch region is Eemshaven, its own
// locality).
type Locality string

// localityTable is the one table every provider's region list is derived
// from, so they can never drift apart.
var localityTable = []struct {
	Locality Locality
	Codes    map[Provider]string
}{
	{"paris", map[Provider]string{AWS: "eu-west-3", Scaleway: "fr-par", GCP: "europe-west9"}},
	{"amsterdam", map[Provider]string{Scaleway: "nl-ams"}},
	{"netherlands", map[Provider]string{GCP: "europe-west4"}},
	{"belgium", map[Provider]string{GCP: "europe-west1"}},
	{"warsaw", map[Provider]string{Scaleway: "pl-waw", GCP: "europe-central2"}},
	{"milan", map[Provider]string{AWS: "eu-south-1", Scaleway: "it-mil", GCP: "europe-west8"}},
	{"turin", map[Provider]string{GCP: "europe-west12"}},
	{"ireland", map[Provider]string{AWS: "eu-west-1"}},
	{"london", map[Provider]string{AWS: "eu-west-2", GCP: "europe-west2"}},
	{"frankfurt", map[Provider]string{AWS: "eu-central-1", GCP: "europe-west3"}},
	{"berlin", map[Provider]string{GCP: "europe-west10"}},
	{"zurich", map[Provider]string{AWS: "eu-central-2", GCP: "europe-west6"}},
	{"stockholm", map[Provider]string{AWS: "eu-north-1", GCP: "europe-north2"}},
	{"finland", map[Provider]string{GCP: "europe-north1"}},
	{"spain", map[Provider]string{AWS: "eu-south-2", GCP: "europe-southwest1"}},
	{"n-virginia", map[Provider]string{AWS: "us-east-1", GCP: "us-east4"}},
	{"south-carolina", map[Provider]string{GCP: "us-east1"}},
	{"ohio", map[Provider]string{AWS: "us-east-2", GCP: "us-east5"}},
	{"iowa", map[Provider]string{GCP: "us-central1"}},
	{"dallas", map[Provider]string{GCP: "us-south1"}},
	{"n-california", map[Provider]string{AWS: "us-west-1"}},
	{"los-angeles", map[Provider]string{GCP: "us-west2"}},
	{"oregon", map[Provider]string{AWS: "us-west-2", GCP: "us-west1"}},
	{"salt-lake-city", map[Provider]string{GCP: "us-west3"}},
	{"las-vegas", map[Provider]string{GCP: "us-west4"}},
	{"canada-central", map[Provider]string{AWS: "ca-central-1", GCP: "northamerica-northeast1"}},
	{"toronto", map[Provider]string{GCP: "northamerica-northeast2"}},
	{"calgary", map[Provider]string{AWS: "ca-west-1"}},
	{"mexico-central", map[Provider]string{AWS: "mx-central-1", GCP: "northamerica-south1"}},
	{"sao-paulo", map[Provider]string{AWS: "sa-east-1", GCP: "southamerica-east1"}},
	{"santiago", map[Provider]string{GCP: "southamerica-west1"}},
	{"uae", map[Provider]string{AWS: "me-central-1"}},
	{"doha", map[Provider]string{GCP: "me-central1"}},
	{"dammam", map[Provider]string{GCP: "me-central2"}},
	{"tel-aviv", map[Provider]string{AWS: "il-central-1", GCP: "me-west1"}},
	{"cape-town", map[Provider]string{AWS: "af-south-1"}},
	{"johannesburg", map[Provider]string{GCP: "africa-south1"}},
	{"tokyo", map[Provider]string{AWS: "ap-northeast-1", GCP: "asia-northeast1"}},
	{"seoul", map[Provider]string{AWS: "ap-northeast-2", GCP: "asia-northeast3"}},
	{"osaka", map[Provider]string{AWS: "ap-northeast-3", GCP: "asia-northeast2"}},
	{"mumbai", map[Provider]string{AWS: "ap-south-1", GCP: "asia-south1"}},
	{"delhi", map[Provider]string{GCP: "asia-south2"}},
	{"hyderabad", map[Provider]string{AWS: "ap-south-2"}},
	{"singapore", map[Provider]string{AWS: "ap-southeast-1", GCP: "asia-southeast1"}},
	{"jakarta", map[Provider]string{AWS: "ap-southeast-3", GCP: "asia-southeast2"}},
	{"sydney", map[Provider]string{AWS: "ap-southeast-2", GCP: "australia-southeast1"}},
	{"melbourne", map[Provider]string{GCP: "australia-southeast2"}},
	{"hong-kong", map[Provider]string{AWS: "ap-east-1", GCP: "asia-east2"}},
	{"taiwan", map[Provider]string{GCP: "asia-east1"}},
}

// RawPrefix marks a region or instance type that infra's tables do not know,
// such as "raw:us-gov-west-1". It is spelled visibly on purpose: reaching
// past the table should look different from staying inside it.
const RawPrefix = "raw:"

// Localities returns every locality, sorted.
func Localities() []Locality {
	out := make([]Locality, 0, len(localityTable))
	for _, l := range localityTable {
		out = append(out, l.Locality)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// RegionAt returns provider p's region code at locality l, if it has one.
func RegionAt(p Provider, l Locality) (string, bool) {
	for _, row := range localityTable {
		if row.Locality == l {
			code, ok := row.Codes[p]
			return code, ok
		}
	}
	return "", false
}

// LocalityOf returns the locality of provider p's region code.
func LocalityOf(p Provider, code string) (Locality, bool) {
	for _, row := range localityTable {
		// Compare only where p has a code: a locality p lacks must not match
		// the empty code.
		if c, ok := row.Codes[p]; ok && c == code {
			return row.Locality, true
		}
	}
	return "", false
}

// Regions returns provider p's region codes, sorted.
func Regions(p Provider) []string {
	var out []string
	for _, row := range localityTable {
		if code, ok := row.Codes[p]; ok {
			out = append(out, code)
		}
	}
	sort.Strings(out)
	return out
}

// RegionKnown reports whether code is one of provider p's regions.
func RegionKnown(p Provider, code string) bool {
	_, ok := LocalityOf(p, code)
	return ok
}

// RegionOwner returns the provider whose table holds code, for the hint when
// a code is used on the wrong cloud.
func RegionOwner(code string) (Provider, bool) {
	for _, p := range Providers {
		if RegionKnown(p, code) {
			return p, true
		}
	}
	return "", false
}

// ResolveRegion checks a written region code for provider p and strips the
// raw escape. ok is false when the code is neither in the table nor raw.
func ResolveRegion(p Provider, written string) (code string, raw bool, ok bool) {
	if len(written) > len(RawPrefix) && written[:len(RawPrefix)] == RawPrefix {
		return written[len(RawPrefix):], true, true
	}
	return written, false, RegionKnown(p, written)
}
