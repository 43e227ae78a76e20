// Package gcpfake is a stateful, in-process fake of the Google Cloud REST
// APIs infra's GCP drivers call, for which Google ships no emulator:
// Secret Manager v1, Artifact Registry v1, Cloud SQL Admin v1, Cloud Run
// v2, IAM v1 (service accounts), Cloud Asset Inventory v1 (the resource
// search) and Cloud Resource Manager v3 (projects.get and the project's
// IAM policy). Tests start it on loopback with New and point the real Go
// clients at URL(), authenticating with a service-account key from
// ServiceAccountKey.
//
// What it proves. Every request and every answer is held to the API's
// published discovery document, the *-api.json that google.golang.org/api
// ships beside its generated clients (the version this binary was built
// with): the method is found from the HTTP method and flatPath; path
// parameters must match their patterns; every query parameter must be the
// method's or a system one (alt, fields, prettyPrint, $.xgafv, … and the
// GAPIC clients' $alt=json;enum-encoding=int) of the right type; the body
// must fit the request schema (types, formats such as int64-in-a-string,
// google-datetime, google-duration, byte; enums; maps; no unknown
// property) and the answer the response schema. A mismatch on either side
// answers HTTP 500, is recorded (Violations) and fails the test at
// cleanup. So a driver that sends a field the API lacks, or a fake answer
// a real client could not get, does not pass.
//
// What is modelled by hand, from the documents' descriptions and Google's
// public docs: each method's behaviour (names carrying the project
// number, ALREADY_EXISTS, NOT_FOUND, label syntax, update masks, quoted
// etags and FAILED_PRECONDITION on a stale one, version states, latest,
// paging, the label filters), the error shape {"error": {code, message,
// status}} with Google's HTTP mapping (which the clients turn into
// googleapi.Error and apierror), 401 without a token, 403 for a project
// outside Options.Projects, and an OAuth token endpoint that checks the
// signed assertion.
//
// What is not proven: server-side semantics beyond what is modelled (a
// filter or update-mask path the fake does not model is refused, a
// method it does not model answers UNIMPLEMENTED, but a modelled one may
// still differ from GCP in ways no document states); IAM policy
// evaluation (a visible project allows everything); quotas, rate limits
// and eventual consistency (every write is visible at once); regional
// endpoints and secrets; real tokens (any bearer token is accepted).
package gcpfake
