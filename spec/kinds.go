package spec

import "sort"

// Kind names a kind of resource, kebab-case.
type Kind string

const (
	IAM                       Kind = "iam"
	ObjectStore               Kind = "object-store"
	Compute                   Kind = "compute"
	Queues                    Kind = "queues"
	Secrets                   Kind = "secrets"
	ImageRegistry             Kind = "image-registry"
	Postgres                  Kind = "postgres"
	S3Bucket                  Kind = "s3-bucket"
	SecurityGroup             Kind = "security-group"
	AWSInstance               Kind = "aws-instance"
	ScalewayFunctionNamespace Kind = "scaleway-function-namespace"
	ScalewayFunction          Kind = "scaleway-function"
	ScalewayContainerNS       Kind = "scaleway-container-namespace"
	ScalewayContainer         Kind = "scaleway-container"
	LogGroup                  Kind = "log-group"
	IAMRole                   Kind = "iam-role"
	IAMPolicy                 Kind = "iam-policy"
	LambdaFunction            Kind = "lambda-function"
)

// TagsField is the field every taggable kind uses for user tags. The
// ownership tag is never part of it for comparison.
const TagsField = "tags"

// OwnershipTagKey is the key of the ownership tag; its value is the fleet.
const OwnershipTagKey = "managed-by-infra"

// KindInfo is everything spec knows about a kind.
type KindInfo struct {
	Kind Kind
	// Providers that offer the kind. Portable kinds list every provider.
	Providers []Provider
	Portable  bool
	Fields    []Field
	// Attributes are the observed values an expression may read
	// ({"observed": ADDR, "attribute": A}), known after apply.
	Attributes []string
	// Physical groups kinds that are one physical thing: an S3 bucket is
	// both object-store and s3-bucket, so one declared under either kind is
	// never an orphan of the other.
	Physical string
	// Identity is the attribute a reference to this kind resolves to where
	// the cloud records references by something other than the name (a
	// security group's groupId): a replacement has a new one, so a
	// dependent still pointing at the old is drift. Empty: the name.
	Identity string
	// Global: the cloud keeps the kind per account or organization, not
	// per region (IAM), so every region's listing shows the same resources;
	// whoever lists every region must list it once.
	Global bool
	// On holds what the kind is on one provider where that differs from the
	// defaults above (a tag for the mark, Physical for the class).
	On  map[Provider]OnProvider
	Doc string
	// Example is the spec of one valid resource of the kind, as a document
	// holds it; a reference in it names PROVIDER/KIND/example of the kind
	// it refers to, whose own Example is then in the same document. Tests
	// build documents from the examples (every kind checks, the crash tests
	// apply the AWS kinds), so a new kind is covered by its row alone.
	Example map[string]any
}

// OnProvider is what a kind is on one provider.
type OnProvider struct {
	// Physical overrides KindInfo.Physical there: a Scaleway compute is a
	// Serverless Containers container, the same one scaleway-container
	// sees.
	Physical string
	// Mark is how the product carries the ownership mark; MarkTag when
	// empty. Products without tags need another rung (ownership.md).
	Mark Mark
	// DescriptionLimit is the length of the description that holds the
	// mark and the tags, where Mark is MarkDescription.
	DescriptionLimit int
	// NameKept says how long the product keeps a deleted resource's name
	// from being used again ("up to a week" for a Cloud SQL instance);
	// empty when it does not. A replace, which makes the resource again
	// under its name, would delete it and then fail: the plan refuses it.
	NameKept string
}

// Mark is how a kind's product carries the ownership mark on a provider.
type Mark string

const (
	// MarkTag: a tag managed-by-infra=<fleet>.
	MarkTag Mark = "tag"
	// MarkDescription: the product has no tags; its description field
	// holds managed-by-infra=<fleet>.
	MarkDescription Mark = "description"
	// MarkNamePrefix: the product has neither; a name starting with
	// <fleet>- is the fleet's.
	MarkNamePrefix Mark = "name prefix"
)

// DescriptionLimit is how long the description that holds kind k's mark
// on provider p may be; 0 when its mark is not a description.
func DescriptionLimit(k Kind, p Provider) int {
	info, ok := Lookup(k)
	if !ok || info.MarkOn(p) != MarkDescription {
		return 0
	}
	return info.On[p].DescriptionLimit
}

// MarkOn returns how the kind carries the ownership mark on provider p.
func (k *KindInfo) MarkOn(p Provider) Mark {
	if m := k.On[p].Mark; m != "" {
		return m
	}
	return MarkTag
}

// Field returns the named field.
func (k *KindInfo) Field(name string) (Field, bool) {
	for _, f := range k.Fields {
		if f.Name == name {
			return f, true
		}
	}
	return Field{}, false
}

// Finishing lists the fields an update sets on provider p to finish a
// resource that a create made but did not complete (an interrupted create,
// or one the SDK retried after the cloud carried it out): every mutable
// field fields sets, the tags, which carry the ownership tag, and the
// create-time fields a later step of the create writes (Field.Finish).
func (k *KindInfo) Finishing(p Provider, fields map[string]any) []string {
	var out []string
	for _, f := range k.Fields {
		if f.Replace || (!f.Finish && (f.Compare == CompareNever || f.Secret)) || !f.UsedOn(p) {
			continue
		}
		if _, set := fields[f.Name]; set || f.Name == TagsField {
			out = append(out, f.Name)
		}
	}
	return out
}

// OfferedBy reports whether provider p offers the kind.
func (k *KindInfo) OfferedBy(p Provider) bool {
	for _, q := range k.Providers {
		if q == p {
			return true
		}
	}
	return false
}

// HasAttribute reports whether the kind publishes attribute a.
func (k *KindInfo) HasAttribute(a string) bool {
	for _, b := range k.Attributes {
		if a == b {
			return true
		}
	}
	return false
}

// PhysicalClass is the physical thing a kind is on provider p, for orphan
// matching: an S3 bucket is both object-store and s3-bucket, and a Scaleway
// container is both compute and scaleway-container.
func PhysicalClass(p Provider, k Kind) string {
	info, ok := Lookup(k)
	switch {
	case !ok:
		return string(k)
	case info.On[p].Physical != "":
		return info.On[p].Physical
	case info.Physical != "":
		return info.Physical
	}
	return string(k)
}

// Lookup returns the kind's metadata.
func Lookup(k Kind) (*KindInfo, bool) {
	info, ok := kindIndex[k]
	return info, ok
}

// Kinds returns every kind, sorted by name.
func Kinds() []*KindInfo {
	out := make([]*KindInfo, 0, len(kindTable))
	for i := range kindTable {
		out = append(out, &kindTable[i])
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Kind < out[j].Kind })
	return out
}

// KindsOf returns the kinds provider p offers, sorted by name.
func KindsOf(p Provider) []*KindInfo {
	var out []*KindInfo
	for _, k := range Kinds() {
		if k.OfferedBy(p) {
			out = append(out, k)
		}
	}
	return out
}

var kindIndex = func() map[Kind]*KindInfo {
	m := make(map[Kind]*KindInfo, len(kindTable))
	for i := range kindTable {
		m[kindTable[i].Kind] = &kindTable[i]
	}
	return m
}()

// portable lists the providers every portable kind is offered on.
var portable = []Provider{AWS, Scaleway, GCP}

// labelled is where a kind's tags can be carried: AWS tags, and GCP labels
// (which restrict keys and values; check says where a tag is not a label).
var labelled = []Provider{AWS, GCP}

func tags() Field {
	return Field{Name: TagsField, Type: TypeStringMap, Compare: CompareSet,
		Doc: "user tags; the ownership tag is added by infra and never compared"}
}

// notOnScalewayTags is tags for a portable kind whose Scaleway product
// takes none (Messaging and Queuing queues, Serverless SQL databases):
// there the name prefix is the ownership mark.
func notOnScalewayTags() Field {
	f := tags()
	f.OnlyOn = labelled
	f.Doc = "user tags, labels on GCP (not on Scaleway: the product takes no tags; there the name prefix <fleet>- is the ownership mark)"
	return f
}

var kindTable = []KindInfo{
	{
		Kind: IAM, Providers: portable, Portable: true, Global: true,
		On:  map[Provider]OnProvider{GCP: {Mark: MarkDescription, DescriptionLimit: 256}},
		Doc: "an identity: an IAM user on AWS, an IAM application on Scaleway, a service account on GCP",
		Fields: []Field{
			{Name: "policies", Type: TypeStringList, Compare: CompareSet, Default: []any{},
				Doc: "managed policies attached (AWS policy ARNs; Scaleway permission-set names; GCP roles granted on the project, such as roles/storage.objectViewer)"},
			tags(),
		},
		Attributes: []string{"arn", "id"},
	},
	{
		Kind: ObjectStore, Providers: portable, Portable: true, Physical: "bucket",
		Doc: "an object store bucket: S3 on AWS, Object Storage on Scaleway, Cloud Storage on GCP",
		Fields: []Field{
			{Name: "versioning", Type: TypeBool, Default: true, Doc: "keep every version of every object"},
			{Name: "forceDestroy", Type: TypeBool, Compare: CompareNever, Default: false,
				Doc: "delete empties the bucket first; without it a non-empty bucket refuses deletion"},
			tags(),
		},
		Attributes: []string{"arn", "url", "region"},
	},
	{
		Kind: Compute, Providers: portable, Portable: true, Physical: "function",
		On:  map[Provider]OnProvider{Scaleway: {Physical: string(ScalewayContainer)}},
		Doc: "serverless compute from a container image: Lambda on AWS, Serverless Containers on Scaleway, a Cloud Run service on GCP",
		Fields: []Field{
			{Name: "image", Type: TypeString, Required: true, Expr: true, Doc: "container image URI"},
			{Name: "executionRole", Type: TypeString, Expr: true, OnlyOn: []Provider{AWS}, RequiredOn: []Provider{AWS},
				Doc: "AWS only, and required there: Lambda runs the function as an IAM role; set executionRole to its ARN"},
			{Name: "namespace", Type: TypeRef, Replace: true, SameProvider: true, Holds: true, OnlyOn: []Provider{Scaleway}, RequiredOn: []Provider{Scaleway},
				RefKinds: []Kind{ScalewayContainerNS},
				Doc:      `Scaleway only, and required there: the containers namespace, {"ref": "scaleway/scaleway-container-namespace/…"}`},
			{Name: "memoryMb", Type: TypeInt, Default: 256.0},
			{Name: "timeoutSec", Type: TypeInt, Default: 30.0},
			{Name: "env", Type: TypeStringMap, Compare: CompareSet, Expr: true},
			tags(),
		},
		Attributes: []string{"arn", "url"},
	},
	{
		Kind: Queues, Providers: portable, Portable: true,
		On:  map[Provider]OnProvider{Scaleway: {Mark: MarkNamePrefix}},
		Doc: "a message queue: SQS on AWS, Messaging and Queuing SQS on Scaleway, a Pub/Sub topic with one pull subscription on GCP",
		Fields: []Field{
			{Name: "visibilityTimeoutSec", Type: TypeInt, Default: 30.0,
				Doc: "how long a received message stays hidden (GCP: the subscription's ack deadline, 10–600 s)"},
			notOnScalewayTags(),
		},
		Attributes: []string{"arn", "url"},
	},
	{
		Kind: Secrets, Providers: portable, Portable: true,
		Doc: "a secret: Secrets Manager on AWS, Secret Manager on Scaleway, Secret Manager on GCP",
		Fields: []Field{
			{Name: "value", Type: TypeSecretSource, Required: true, Compare: CompareNever, Secret: true, Finish: true,
				Doc: "where the value comes from at apply time; never stored, diffed or printed"},
			{Name: "description", Type: TypeString, Doc: "a description (GCP: the secret's annotation description)"},
			tags(),
		},
		Attributes: []string{"arn", "id", "version"},
	},
	{
		Kind: ImageRegistry, Providers: portable, Portable: true,
		On:  map[Provider]OnProvider{Scaleway: {Mark: MarkDescription, DescriptionLimit: 255}},
		Doc: "a container image registry: ECR on AWS, Container Registry namespace on Scaleway, a docker Artifact Registry repository on GCP",
		Fields: []Field{
			{Name: "immutableTags", Type: TypeBool, Default: false, OnlyOn: []Provider{AWS, GCP},
				Doc: "image tags cannot be overwritten (not on Scaleway: Container Registry has no such setting)"},
			tags(),
		},
		Attributes: []string{"uri", "arn"},
	},
	{
		Kind: Postgres, Providers: portable, Portable: true,
		On:  map[Provider]OnProvider{Scaleway: {Mark: MarkNamePrefix}, GCP: {NameKept: "up to a week"}},
		Doc: "a serverless PostgreSQL database: Aurora Serverless v2 on AWS, Serverless SQL on Scaleway, a Cloud SQL for PostgreSQL instance on GCP",
		Fields: []Field{
			{Name: "masterUsername", Type: TypeString, RequiredOn: []Provider{AWS, GCP}, IgnoredOn: []Provider{Scaleway}, Replace: true,
				Doc: "the database's master user (AWS, GCP; Scaleway Serverless SQL authenticates with IAM and ignores it)"},
			{Name: "masterPasswordSecret", Type: TypeRef, RequiredOn: []Provider{AWS, GCP}, IgnoredOn: []Provider{Scaleway}, Compare: CompareNever, Secret: true, Finish: true,
				RefKinds: []Kind{Secrets}, SameProvider: true,
				Doc: "the secret holding the master password, read once at create"},
			{Name: "engineVersion", Type: TypeString, Default: "16", Compare: CompareVersion,
				Doc: `the major version, such as "16"; a reported "16.6" satisfies it`},
			{Name: "minCapacity", Type: TypeNumber,
				Doc: "the least capacity (AWS: ACUs; Scaleway: vCPUs; GCP: Cloud SQL does not scale, so only maxCapacity is used)"},
			{Name: "maxCapacity", Type: TypeNumber,
				Doc: "the most capacity (AWS: ACUs; Scaleway: vCPUs; GCP: the instance's vCPUs, a db-custom machine with 3.75 GiB each)"},
			notOnScalewayTags(),
		},
		Attributes: []string{"endpoint", "port", "arn", "version"},
	},
	{
		Kind: S3Bucket, Providers: []Provider{AWS}, Physical: "bucket",
		Doc: "an S3 bucket with the AWS-only settings, such as object lock",
		Fields: []Field{
			{Name: "versioning", Type: TypeBool, Default: true},
			{Name: "objectLock", Type: TypeBool, Replace: true, Default: false,
				Doc: "object lock is set at create, so changing it replaces the bucket"},
			{Name: "forceDestroy", Type: TypeBool, Compare: CompareNever, Default: false},
			tags(),
		},
		Attributes: []string{"arn", "url", "region"},
	},
	{
		Kind: SecurityGroup, Providers: []Provider{AWS},
		Doc: "an EC2 security group",
		Fields: []Field{
			{Name: "description", Type: TypeString, Required: true, Replace: true},
			{Name: "ingress", Type: TypeIngress, Compare: CompareSet,
				Doc: "TCP ports open to CIDR blocks"},
			tags(),
		},
		Attributes: []string{"groupId", "vpcId"},
		Identity:   "groupId",
	},
	{
		Kind: AWSInstance, Providers: []Provider{AWS},
		Doc: "an EC2 instance",
		Fields: []Field{
			{Name: "imageId", Type: TypeString, Required: true, Replace: true, Instructions: []string{"latest"},
				Doc: `an AMI id, or "latest" for the newest Amazon Linux 2023 at create (never drift)`},
			{Name: "instanceType", Type: TypeString, Required: true, Replace: true},
			{Name: "securityGroup", Type: TypeRef, Required: true, RefKinds: []Kind{SecurityGroup},
				RegionLocal: true, SameProvider: true, Holds: true},
			{Name: "keyName", Type: TypeString, Replace: true},
			{Name: "subnetId", Type: TypeString, Replace: true},
			tags(),
		},
		Attributes: []string{"instanceId", "privateIp", "state"},
	},
	{
		Kind: ScalewayFunctionNamespace, Providers: []Provider{Scaleway},
		Doc: "a Scaleway Functions namespace",
		Fields: []Field{
			{Name: "description", Type: TypeString},
			tags(),
		},
		Attributes: []string{"id"},
	},
	{
		Kind: ScalewayFunction, Providers: []Provider{Scaleway},
		Doc: "a Scaleway function",
		Fields: []Field{
			{Name: "namespace", Type: TypeRef, Required: true, Replace: true, SameProvider: true, Holds: true,
				RefKinds: []Kind{ScalewayFunctionNamespace}},
			{Name: "runtime", Type: TypeString, Required: true, Replace: true},
			{Name: "handler", Type: TypeString, Default: "handler.handle"},
			{Name: "code", Type: TypeString, Compare: CompareNever, Doc: "inline source, deployed at create"},
			{Name: "sourceBucket", Type: TypeRef, RefKinds: []Kind{ObjectStore, S3Bucket},
				Doc: "a bucket on any cloud, passed as SOURCE_BUCKET"},
			{Name: "env", Type: TypeStringMap, Compare: CompareSet, Expr: true},
			tags(),
		},
		Attributes: []string{"id", "url"},
	},
	{
		Kind: ScalewayContainerNS, Providers: []Provider{Scaleway},
		Doc: "a Scaleway Serverless Containers namespace",
		Fields: []Field{
			{Name: "description", Type: TypeString},
			tags(),
		},
		Attributes: []string{"id", "registryEndpoint"},
	},
	{
		Kind: ScalewayContainer, Providers: []Provider{Scaleway},
		Doc: "a Scaleway Serverless Containers container",
		Fields: []Field{
			{Name: "namespace", Type: TypeRef, Required: true, Replace: true, SameProvider: true, Holds: true,
				RefKinds: []Kind{ScalewayContainerNS}},
			{Name: "image", Type: TypeString, Required: true, Expr: true},
			{Name: "port", Type: TypeInt, Default: 8080.0},
			{Name: "minScale", Type: TypeInt, Default: 0.0},
			{Name: "maxScale", Type: TypeInt, Default: 1.0},
			{Name: "memoryMb", Type: TypeInt, Default: 256.0},
			{Name: "cpuLimit", Type: TypeInt, Default: 140.0},
			{Name: "timeoutSec", Type: TypeInt, Default: 30.0},
			{Name: "env", Type: TypeStringMap, Compare: CompareSet, Expr: true},
			{Name: "secretEnv", Type: TypeRefMap, Compare: CompareNever, Secret: true, SameProvider: true, RunTime: true,
				RefKinds: []Kind{Secrets}, Doc: "environment variables set from this fleet's secrets"},
			tags(),
		},
		Attributes: []string{"id", "url"},
	},
	{
		Kind: LogGroup, Providers: []Provider{AWS},
		Doc: "a CloudWatch Logs log group, named by its name, which here holds no '/' (so not Lambda's own /aws/lambda/NAME groups)",
		Fields: []Field{
			{Name: "retentionDays", Type: TypeInt,
				Doc: "days the events are kept: 1, 3, 5, 7, 14, 30, 60, 90, 120, 150, 180, 365, 400, 545, 731, 1096, 1827, 2192, 2557, 2922, 3288 or 3653; a group made without it keeps events forever"},
			tags(),
		},
		Attributes: []string{"arn"},
	},
	{
		Kind: IAMRole, Providers: []Provider{AWS}, Global: true,
		Doc: "an IAM role, named by its role name, at the path /: who may assume it and the managed policies attached to it",
		Fields: []Field{
			{Name: "trust", Type: TypeString, Required: true, Expr: true, Compare: CompareJSON,
				Doc: "the trust policy (the assume-role policy document), as JSON: who may assume the role"},
			{Name: "description", Type: TypeString, Doc: "a description, up to 1000 characters"},
			{Name: "maxSessionDurationSec", Type: TypeInt,
				Doc: "the longest session a caller may ask for, 3600 to 43200 seconds; a role made without it has IAM's 3600"},
			{Name: "policies", Type: TypeStringList, Expr: true, Compare: CompareSet, Default: []any{},
				Doc: `managed policies attached, by ARN: an AWS managed policy's, or the arn of a policy of the fleet ({"observed": "aws/iam-policy/NAME", "attribute": "arn"}), which is then made first`},
			tags(),
		},
		Attributes: []string{"arn", "roleId"},
		Example: map[string]any{
			"trust":                 `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":{"Service":"lambda.amazonaws.com"},"Action":"sts:AssumeRole"}]}`,
			"description":           "runs the example function",
			"maxSessionDurationSec": 3600.0,
			"policies":              []any{map[string]any{"observed": "aws/iam-policy/example", "attribute": "arn"}},
		},
	},
	{
		Kind: IAMPolicy, Providers: []Provider{AWS}, Global: true,
		Doc: "an IAM customer managed policy, named by its policy name, at the path /",
		Fields: []Field{
			{Name: "document", Type: TypeString, Required: true, Expr: true, Compare: CompareJSON,
				Doc: "the policy document, as JSON; a change is a new default version"},
			{Name: "description", Type: TypeString, Replace: true,
				Doc: "a description, up to 1000 characters; IAM cannot change one, so a change replaces the policy"},
			tags(),
		},
		Attributes: []string{"arn"},
		Example: map[string]any{
			"document":    `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":["logs:CreateLogStream","logs:PutLogEvents"],"Resource":"*"}]}`,
			"description": "lets the example function write its logs",
		},
	},
	{
		Kind: LambdaFunction, Providers: []Provider{AWS}, Physical: "function",
		Doc: "a Lambda function, named by its function name, from a .zip file or a container image",
		Fields: []Field{
			{Name: "role", Type: TypeRef, Required: true, RefKinds: []Kind{IAMRole}, SameProvider: true,
				Doc: `the IAM role the function runs as, {"ref": "aws/iam-role/…"}; a role made in the same apply is made first, and waited for until Lambda can assume it`},
			{Name: "packageType", Type: TypeString, Replace: true,
				Doc: `Zip or Image; check derives it from which of zip and image is set, so it need not be written. Lambda cannot change it: switching between zip and image replaces the function`},
			{Name: "zip", Type: TypeString,
				Doc: "the path of the deployment package, a .zip file, relative to the fleet document's directory (for a fleet program, the directory infra runs in); exactly one of zip and image. The path is never read back: the code is compared by codeSha256"},
			{Name: "codeSha256", Type: TypeString,
				Doc: "the base64 SHA-256 of the zip's bytes, as Lambda reports CodeSha256; infra fills it from the file when it loads the document, and apply refuses a file whose hash is not this one"},
			{Name: "image", Type: TypeString, Expr: true, Doc: "a container image URI in ECR; exactly one of zip and image"},
			{Name: "runtime", Type: TypeString, Doc: "the runtime, such as python3.13 or provided.al2023; required with zip, refused with image"},
			{Name: "handler", Type: TypeString, Doc: "the method Lambda calls, such as app.handler; required with zip, refused with image"},
			{Name: "memoryMb", Type: TypeInt, Doc: "memory in MB, 128 to 10240; a function made without it has Lambda's 128"},
			{Name: "timeoutSec", Type: TypeInt, Doc: "how long an invocation may run, 1 to 900 seconds; a function made without it has Lambda's 3"},
			{Name: "architecture", Type: TypeString, Doc: "x86_64 or arm64; a function made without it is x86_64"},
			{Name: "env", Type: TypeStringMap, Compare: CompareSet, Expr: true, Doc: "environment variables"},
			tags(),
		},
		Attributes: []string{"arn"},
		Example: map[string]any{
			"role":         map[string]any{"ref": "aws/iam-role/example"},
			"image":        "123456789012.dkr.ecr.eu-west-3.amazonaws.com/example:1",
			"memoryMb":     256.0,
			"timeoutSec":   30.0,
			"architecture": "arm64",
			"env":          map[string]any{"LOG_LEVEL": "info"},
		},
	},
}
