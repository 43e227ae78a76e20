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
	DynamoDBTable             Kind = "dynamodb-table"
	VPC                       Kind = "vpc"
	Subnet                    Kind = "subnet"
	InternetGateway           Kind = "internet-gateway"
	RouteTable                Kind = "route-table"
	NATGateway                Kind = "nat-gateway"
	ALB                       Kind = "alb"
	ALBTargetGroup            Kind = "alb-target-group"
	ALBListener               Kind = "alb-listener"
	SNSTopic                  Kind = "sns-topic"
	SNSSubscription           Kind = "sns-subscription"
	Route53Zone               Kind = "route53-zone"
	Route53Record             Kind = "route53-record"
	KMSKey                    Kind = "kms-key"
	KMSAlias                  Kind = "kms-alias"
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
	// NameTag is the tag that holds the name, where the cloud gives the
	// resource an id and no name of its own (an EC2 instance's or VPC's
	// Name): such names need not be unique in the cloud, so a replace
	// cannot make the new one before the old is gone.
	NameTag string
	// Global: the cloud keeps the kind per account or organization, not
	// per region (IAM), so every region's listing shows the same resources;
	// whoever lists every region must list it once.
	Global bool
	// On holds what the kind is on one provider where that differs from the
	// defaults above (a tag for the mark, Physical for the class).
	On  map[Provider]OnProvider
	Doc string
	// Example is the spec of one valid resource of the kind, as a document
	// holds it; a reference in it names PROVIDER/KIND/NAME, NAME being the
	// referenced kind's ExampleAddressName (or example-SUFFIX for one of
	// its MoreExamples). Examples builds documents from it, with what it
	// refers to; the tests check them (every kind) and the crash tests
	// apply them (the AWS kinds), so a new kind is covered by its row
	// alone.
	Example map[string]any
	// ExampleName is the name Examples gives the Example resource, as is,
	// where the kind's names have a shape of their own (a hosted zone's is
	// a domain, a record's FQDN:TYPE inside its zone's ExampleName); empty,
	// FLEET-KIND, and references name it example. Not for a kind marked by
	// its name prefix: the name would not carry the fleet's mark.
	ExampleName string
	// MoreExamples are further resources of the kind, by a suffix, for
	// another kind's Example that needs more than one (an ALB's subnets in
	// two zones): each holds the fields that differ from Example. A
	// reference to PROVIDER/KIND/example-SUFFIX names it; Examples makes
	// it, named FLEET-KIND-SUFFIX, only where referred to. Not with an
	// ExampleName.
	MoreExamples map[string]map[string]any
	// DeleteNote is what a delete of the kind does that its plan row does
	// not say, shown beside every delete and replace of it: a KMS key is
	// not deleted but scheduled for deletion. Empty: a delete deletes.
	DeleteNote string
}

// ExampleAddressName is the name references in Examples give the kind's
// Example resource, and a name of the kind's shape: ExampleName, else
// "example".
func (k *KindInfo) ExampleAddressName() string {
	if k.ExampleName != "" {
		return k.ExampleName
	}
	return "example"
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
	// Example holds the fields of the kind's Example that differ there (a
	// Scaleway permission set where AWS takes a policy ARN).
	Example map[string]any
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
	// MarkStatement: the product has no tags and no free field of its own,
	// but the resource adds a statement to another's access policy (an SNS
	// subscription's to its queue's), and that statement's Sid holds the
	// resource's name and the fleet. Without a name of its own in the
	// cloud, the resource is found by that Sid.
	MarkStatement Mark = "policy statement"
	// MarkCompanion: the product has no mark of its own and cannot hold one
	// (a Route 53 record set has no tags, and its name is a DNS name): a
	// companion beside it, made and deleted in the same atomic call, carries
	// managed-by-infra=<fleet> (a TXT record set, as external-dns keeps
	// its registry). The driver reads the companion's fleet as the
	// resource's owner and hides the companions from its listing.
	MarkCompanion Mark = "companion record"
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
		Example: map[string]any{"policies": []any{"arn:aws:iam::aws:policy/ReadOnlyAccess"}, "tags": map[string]any{"team": "web"}},
		On: map[Provider]OnProvider{
			GCP:      {Mark: MarkDescription, DescriptionLimit: 256, Example: map[string]any{"policies": []any{"roles/storage.objectViewer"}}},
			Scaleway: {Example: map[string]any{"policies": []any{"ObjectStorageReadOnly"}}},
		},
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
		Example: map[string]any{"versioning": true, "forceDestroy": true, "tags": map[string]any{"team": "web"}},
		Doc:     "an object store bucket: S3 on AWS, Object Storage on Scaleway, Cloud Storage on GCP",
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
		Example: map[string]any{"image": "registry.example/app:1", "executionRole": "arn:aws:iam::123456789012:role/app", "namespace": map[string]any{"ref": "scaleway/scaleway-container-namespace/example"}, "memoryMb": 512.0, "env": map[string]any{"MODE": "example"}},
		On:      map[Provider]OnProvider{Scaleway: {Physical: string(ScalewayContainer)}},
		Doc:     "serverless compute from a container image: Lambda on AWS, Serverless Containers on Scaleway, a Cloud Run service on GCP",
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
		Example: map[string]any{"visibilityTimeoutSec": 45.0, "tags": map[string]any{"team": "web"}},
		On:      map[Provider]OnProvider{Scaleway: {Mark: MarkNamePrefix}},
		Doc:     "a message queue: SQS on AWS, Messaging and Queuing SQS on Scaleway, a Pub/Sub topic with one pull subscription on GCP",
		Fields: []Field{
			{Name: "visibilityTimeoutSec", Type: TypeInt, Default: 30.0,
				Doc: "how long a received message stays hidden (GCP: the subscription's ack deadline, 10–600 s)"},
			notOnScalewayTags(),
		},
		Attributes: []string{"arn", "url"},
	},
	{
		Kind: Secrets, Providers: portable, Portable: true,
		Example: map[string]any{"value": map[string]any{"fromEnv": "EXAMPLE_SECRET"}, "description": "an example", "tags": map[string]any{"team": "web"}},
		Doc:     "a secret: Secrets Manager on AWS, Secret Manager on Scaleway, Secret Manager on GCP",
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
		Example: map[string]any{"immutableTags": true, "tags": map[string]any{"team": "web"}},
		On:      map[Provider]OnProvider{Scaleway: {Mark: MarkDescription, DescriptionLimit: 255}},
		Doc:     "a container image registry: ECR on AWS, Container Registry namespace on Scaleway, a docker Artifact Registry repository on GCP",
		Fields: []Field{
			{Name: "immutableTags", Type: TypeBool, Default: false, OnlyOn: []Provider{AWS, GCP},
				Doc: "image tags cannot be overwritten (not on Scaleway: Container Registry has no such setting)"},
			tags(),
		},
		Attributes: []string{"uri", "arn"},
	},
	{
		Kind: Postgres, Providers: portable, Portable: true,
		Example: map[string]any{"masterUsername": "dbadmin", "masterPasswordSecret": map[string]any{"ref": "aws/secrets/example"}, "minCapacity": 0.5, "maxCapacity": 2.0},
		On: map[Provider]OnProvider{
			Scaleway: {Mark: MarkNamePrefix, Example: map[string]any{"minCapacity": 1.0, "maxCapacity": 2.0}},
			GCP:      {NameKept: "up to a week", Example: map[string]any{"minCapacity": 2.0, "maxCapacity": 2.0}},
		},
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
		Example: map[string]any{"versioning": true, "objectLock": true, "forceDestroy": true, "tags": map[string]any{"team": "web"}},
		Doc:     "an S3 bucket with the AWS-only settings, such as object lock",
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
		Example: map[string]any{"description": "web tier", "ingress": []any{map[string]any{"port": 443.0, "cidr": "10.0.0.0/8"}}, "tags": map[string]any{"team": "web"}},
		Doc:     "an EC2 security group, named by its group name, which is unique only within its VPC",
		Fields: []Field{
			{Name: "description", Type: TypeString, Required: true, Replace: true},
			{Name: "vpc", Type: TypeRef, Replace: true, RefKinds: []Kind{VPC},
				RegionLocal: true, SameProvider: true, Holds: true, Wired: true,
				Doc: `the VPC, {"ref": "aws/vpc/…"}; unset, the region's default VPC; EC2 cannot move a group`},
			{Name: "ingress", Type: TypeIngress, Compare: CompareSet,
				Doc: "TCP ports open to CIDR blocks"},
			tags(),
		},
		Attributes: []string{"groupId", "vpcId"},
		Identity:   "groupId",
	},
	{
		Kind: AWSInstance, Providers: []Provider{AWS}, NameTag: "Name",
		Example: map[string]any{"imageId": "latest", "instanceType": "t3.micro", "securityGroup": map[string]any{"ref": "aws/security-group/example"}},
		Doc:     "an EC2 instance",
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
		Example: map[string]any{"description": "functions"},
		Doc:     "a Scaleway Functions namespace",
		Fields: []Field{
			{Name: "description", Type: TypeString},
			tags(),
		},
		Attributes: []string{"id"},
	},
	{
		Kind: ScalewayFunction, Providers: []Provider{Scaleway},
		Example: map[string]any{"namespace": map[string]any{"ref": "scaleway/scaleway-function-namespace/example"}, "runtime": "python311", "code": "def handle(event, context): return 1"},
		Doc:     "a Scaleway function",
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
		Example: map[string]any{"description": "apps"},
		Doc:     "a Scaleway Serverless Containers namespace",
		Fields: []Field{
			{Name: "description", Type: TypeString},
			tags(),
		},
		Attributes: []string{"id", "registryEndpoint"},
	},
	{
		Kind: ScalewayContainer, Providers: []Provider{Scaleway},
		Example: map[string]any{"namespace": map[string]any{"ref": "scaleway/scaleway-container-namespace/example"}, "image": "rg.fr-par.scw.cloud/example/web:1", "env": map[string]any{"MODE": "example"}},
		Doc:     "a Scaleway Serverless Containers container",
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
		Example: map[string]any{"retentionDays": 14.0, "tags": map[string]any{"team": "web"}},
		Doc:     "a CloudWatch Logs log group, named by its name, which here holds no '/' (so not Lambda's own /aws/lambda/NAME groups)",
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
			{Name: "trust", Type: TypeString, Required: true, Expr: true, Compare: ComparePolicy,
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
			{Name: "document", Type: TypeString, Required: true, Expr: true, Compare: ComparePolicy,
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
		Kind: DynamoDBTable, Providers: []Provider{AWS},
		Doc: "a DynamoDB table, named by its table name, with its global secondary indexes",
		Fields: []Field{
			{Name: "hashKey", Type: TypeString, Required: true, Replace: true, Doc: "the partition key's attribute name"},
			{Name: "hashKeyType", Type: TypeString, Default: "S", Replace: true, Doc: `the partition key's type: "S", "N" or "B"`},
			{Name: "rangeKey", Type: TypeString, Replace: true, Doc: "the sort key's attribute name; none when empty"},
			{Name: "rangeKeyType", Type: TypeString, Default: "S", Replace: true, Doc: `the sort key's type: "S", "N" or "B", with rangeKey only`},
			{Name: "billingMode", Type: TypeString, Default: "PAY_PER_REQUEST",
				Doc: `"PAY_PER_REQUEST" or "PROVISIONED"; DynamoDB takes at most four switches to PAY_PER_REQUEST per table in 24 hours`},
			{Name: "readCapacity", Type: TypeInt, Doc: "read capacity units, required when billingMode is PROVISIONED"},
			{Name: "writeCapacity", Type: TypeInt, Doc: "write capacity units, required when billingMode is PROVISIONED"},
			{Name: "ttlAttribute", Type: TypeString, Doc: "the attribute holding items' expiry time; TTL is off when empty. DynamoDB takes one TTL change per table per hour"},
			{Name: "pointInTimeRecovery", Type: TypeBool, Default: false},
			{Name: "deletionProtection", Type: TypeBool, Default: false,
				Doc: "a protected table cannot be deleted, nor so replaced: set it false and apply first"},
			{Name: "globalSecondaryIndexes", Type: TypeObjects, Item: "globalSecondaryIndex",
				Doc: "the global secondary indexes by name (3–255 of a-z A-Z 0-9 _ - ., at most 20): one added or removed is " +
					"created or deleted in place, one whose keys or projection change is deleted and created again, " +
					"one at a time, each waited for",
				Of: []Field{
					{Name: "hashKey", Type: TypeString, Required: true, Replace: true, Doc: "the index's partition key attribute"},
					{Name: "hashKeyType", Type: TypeString, Default: "S", Replace: true,
						Doc: `its type: "S", "N" or "B"; an attribute that is also another key has one type`},
					{Name: "rangeKey", Type: TypeString, Replace: true, Doc: "the index's sort key attribute; none when empty"},
					{Name: "rangeKeyType", Type: TypeString, Default: "S", Replace: true, Doc: `its type: "S", "N" or "B", with rangeKey only`},
					{Name: "projection", Type: TypeString, Default: "ALL", Replace: true,
						Doc: `the attributes copied into the index: "ALL", "KEYS_ONLY" or "INCLUDE" (the keys and nonKeyAttributes)`},
					{Name: "nonKeyAttributes", Type: TypeStringList, Compare: CompareSet, Replace: true,
						Doc: "the attributes INCLUDE copies besides the keys, required with it and only with it; at most 100 over the table's indexes"},
					{Name: "readCapacity", Type: TypeInt, Doc: "the index's read capacity units: required when the table's billingMode is PROVISIONED, refused otherwise"},
					{Name: "writeCapacity", Type: TypeInt, Doc: "the index's write capacity units: required when the table's billingMode is PROVISIONED, refused otherwise"},
				}},
			tags(),
		},
		Attributes: []string{"arn"},
		Example: map[string]any{"hashKey": "id", "rangeKey": "sk", "rangeKeyType": "N", "ttlAttribute": "expiresAt",
			"pointInTimeRecovery": true, "tags": map[string]any{"team": "example"},
			"globalSecondaryIndexes": map[string]any{"by-owner": map[string]any{"hashKey": "owner", "rangeKey": "sk", "rangeKeyType": "N",
				"projection": "INCLUDE", "nonKeyAttributes": []any{"title"}}}},
	},
	{
		Kind: VPC, Providers: []Provider{AWS}, NameTag: "Name",
		Doc: "an EC2 VPC, named by its Name tag",
		Fields: []Field{
			{Name: "cidr", Type: TypeString, Required: true, Replace: true, CIDR: true,
				Doc: "the VPC's primary IPv4 block, such as 10.0.0.0/16 (a /16 to a /28); EC2 cannot change it"},
			{Name: "enableDnsSupport", Type: TypeBool, Default: true,
				Doc: "the Amazon DNS server answers in the VPC"},
			{Name: "enableDnsHostnames", Type: TypeBool, Default: false,
				Doc: "instances with public addresses get public DNS names (needs enableDnsSupport)"},
			tags(),
		},
		Attributes: []string{"vpcId", "arn"},
		Identity:   "vpcId",
		Example:    map[string]any{"cidr": "10.0.0.0/16"},
	},
	{
		Kind: Subnet, Providers: []Provider{AWS}, NameTag: "Name",
		Doc: "an EC2 subnet of a VPC, in one availability zone, named by its Name tag",
		Fields: []Field{
			{Name: "vpc", Type: TypeRef, Required: true, Replace: true, RefKinds: []Kind{VPC},
				RegionLocal: true, SameProvider: true, Holds: true,
				Doc: `the VPC, {"ref": "aws/vpc/…"}; a subnet cannot move`},
			{Name: "cidr", Type: TypeString, Required: true, Replace: true, CIDR: true, Within: &Within{Ref: "vpc", Field: "cidr"},
				Doc: "the subnet's IPv4 block, inside its VPC's (a /16 to a /28); EC2 cannot change it"},
			{Name: "availabilityZone", Type: TypeString, Required: true, Replace: true,
				Doc: "the zone, in the subnet's region, such as eu-west-3a"},
			{Name: "mapPublicIpOnLaunch", Type: TypeBool, Default: false,
				Doc: "instances started in the subnet get a public IPv4 address"},
			tags(),
		},
		Attributes: []string{"subnetId", "arn", "availabilityZone"},
		Identity:   "subnetId",
		Example: map[string]any{"vpc": map[string]any{"ref": "aws/vpc/example"}, "cidr": "10.0.1.0/24",
			"availabilityZone": "eu-west-3a"},
		// An ALB's second zone.
		MoreExamples: map[string]map[string]any{"b": {"cidr": "10.0.2.0/24", "availabilityZone": "eu-west-3b"}},
	},
	{
		Kind: InternetGateway, Providers: []Provider{AWS}, NameTag: "Name",
		Doc: "an EC2 internet gateway, attached to one VPC, named by its Name tag",
		Fields: []Field{
			{Name: "vpc", Type: TypeRef, Required: true, RefKinds: []Kind{VPC},
				RegionLocal: true, SameProvider: true, Holds: true,
				Doc: `the VPC it is attached to, {"ref": "aws/vpc/…"}; a change detaches it and attaches it to the new one`},
			tags(),
		},
		Attributes: []string{"internetGatewayId", "arn"},
		Identity:   "internetGatewayId",
		Example:    map[string]any{"vpc": map[string]any{"ref": "aws/vpc/example"}},
	},
	{
		Kind: RouteTable, Providers: []Provider{AWS}, NameTag: "Name",
		Doc: "an EC2 route table of a VPC, named by its Name tag, with its routes (besides the VPC's local one) and the subnets associated with it; never the VPC's main route table",
		Fields: []Field{
			{Name: "vpc", Type: TypeRef, Required: true, Replace: true, RefKinds: []Kind{VPC},
				RegionLocal: true, SameProvider: true, Holds: true,
				Doc: `the VPC, {"ref": "aws/vpc/…"}; a route table cannot move`},
			// Two fields, not one to either kind: a reference holds a name,
			// not its kind, and the typed SDK takes one kind a field. Holds,
			// though EC2 deletes a gateway a route points at (the route is
			// left a blackhole): a replaced gateway replaces the table around
			// it, so no table routes to a gateway that is gone.
			{Name: "gatewayRoutes", Type: TypeRefMap, Compare: CompareSet, RefKinds: []Kind{InternetGateway},
				RegionLocal: true, SameProvider: true, Holds: true,
				Doc: `routes to an internet gateway, keyed by destination IPv4 block: {"0.0.0.0/0": {"ref": "aws/internet-gateway/…"}}; added, pointed elsewhere or removed in place (a replaced gateway replaces the table); a destination is in gatewayRoutes or natRoutes, not both`},
			{Name: "natRoutes", Type: TypeRefMap, Compare: CompareSet, RefKinds: []Kind{NATGateway},
				RegionLocal: true, SameProvider: true, Holds: true,
				Doc: `routes to a NAT gateway, keyed by destination IPv4 block: {"0.0.0.0/0": {"ref": "aws/nat-gateway/…"}}; added, pointed elsewhere or removed in place (a replaced gateway replaces the table)`},
			{Name: "subnets", Type: TypeRefMap, Compare: CompareValues, RefKinds: []Kind{Subnet},
				RegionLocal: true, SameProvider: true, Holds: true,
				Doc: `the subnets associated with it, under labels of your choosing: {"web": {"ref": "aws/subnet/…"}}; in its VPC; each is associated or disassociated in place (a subnet of another of the VPC's tables moves to this one)`},
			tags(),
		},
		Attributes: []string{"routeTableId", "arn"},
		Identity:   "routeTableId",
		Example: map[string]any{"vpc": map[string]any{"ref": "aws/vpc/example"},
			"gatewayRoutes": map[string]any{"0.0.0.0/0": map[string]any{"ref": "aws/internet-gateway/example"}},
			"subnets":       map[string]any{"web": map[string]any{"ref": "aws/subnet/example"}}},
	},
	{
		Kind: NATGateway, Providers: []Provider{AWS}, NameTag: "Name",
		Doc: "an EC2 NAT gateway in one subnet, named by its Name tag; a public one holds an Elastic IP address that infra allocates with it and releases after it",
		Fields: []Field{
			{Name: "subnet", Type: TypeRef, Required: true, Replace: true, RefKinds: []Kind{Subnet},
				RegionLocal: true, SameProvider: true, Holds: true,
				Doc: `the subnet, {"ref": "aws/subnet/…"}; a public gateway's needs a route to an internet gateway; a NAT gateway cannot move`},
			{Name: "connectivity", Type: TypeString, Default: "public", Replace: true,
				Doc: "public (through an Elastic IP address infra allocates, tagged with the gateway's name) or private (no address: to other VPCs and networks); EC2 cannot change it"},
			tags(),
		},
		Attributes: []string{"natGatewayId", "arn", "allocationId", "publicIp"},
		Identity:   "natGatewayId",
		Example:    map[string]any{"subnet": map[string]any{"ref": "aws/subnet/example"}},
	},
	{
		Kind: ALB, Providers: []Provider{AWS},
		Doc: "an Elastic Load Balancing Application Load Balancer, named by its name (1 to 32 letters, digits and hyphens, not starting or ending with a hyphen, nor starting with internal-)",
		Fields: []Field{
			{Name: "subnets", Type: TypeRefMap, Required: true, Compare: CompareSet, RefKinds: []Kind{Subnet},
				RegionLocal: true, SameProvider: true, Holds: true, Wired: true,
				Doc: `one subnet per availability zone, at least two zones, keyed by the zone: {"eu-west-3a": {"ref": "aws/subnet/…"}, …}; all in one VPC`},
			{Name: "securityGroups", Type: TypeRefMap, Compare: CompareValues, RefKinds: []Kind{SecurityGroup},
				RegionLocal: true, SameProvider: true, Holds: true, Wired: true,
				Doc: `the security groups, under labels of your choosing: {"web": {"ref": "aws/security-group/…"}}; in the subnets' VPC; unset, the VPC's default group`},
			{Name: "scheme", Type: TypeString, Default: "internet-facing", Replace: true,
				Doc: "internet-facing or internal; Elastic Load Balancing cannot change it"},
			{Name: "idleTimeoutSec", Type: TypeInt, Default: 60.0,
				Doc: "seconds a connection may stay idle, 1 to 4000"},
			{Name: "deletionProtection", Type: TypeBool, Default: false,
				Doc: "while true, the load balancer cannot be deleted (nor replaced): set it to false first"},
			tags(),
		},
		Attributes: []string{"arn", "dnsName", "canonicalHostedZoneId", "vpcId"},
		Identity:   "arn",
		Example: map[string]any{"subnets": map[string]any{"eu-west-3a": map[string]any{"ref": "aws/subnet/example"},
			"eu-west-3b": map[string]any{"ref": "aws/subnet/example-b"}},
			// No securityGroups: the example security-group sets no vpc,
			// so it is in the default VPC, and an ALB's groups must be in
			// its subnets'.
			"idleTimeoutSec": 120.0, "tags": map[string]any{"team": "web"}},
	},
	{
		Kind: ALBTargetGroup, Providers: []Provider{AWS},
		Doc: "an Elastic Load Balancing target group of an Application Load Balancer, named by its name (1 to 32 letters, digits and hyphens, not starting or ending with a hyphen)",
		Fields: []Field{
			{Name: "targetType", Type: TypeString, Default: "instance", Replace: true,
				Doc: "instance, ip or lambda; Elastic Load Balancing cannot change it"},
			{Name: "vpc", Type: TypeRef, Replace: true, RefKinds: []Kind{VPC}, RegionLocal: true, SameProvider: true, Holds: true, Wired: true,
				Doc: `the VPC of the targets, {"ref": "aws/vpc/…"}: required for instance and ip targets, refused for lambda`},
			{Name: "protocol", Type: TypeString, Replace: true,
				Doc: "HTTP or HTTPS, to the targets: required for instance and ip targets, refused for lambda"},
			{Name: "port", Type: TypeInt, Replace: true,
				Doc: "the targets' port, 1 to 65535: required for instance and ip targets, refused for lambda"},
			{Name: "healthCheckPath", Type: TypeString,
				Doc: "the path health checks ask for, starting with /; unset, Elastic Load Balancing's (/); refused for lambda"},
			{Name: "healthCheckIntervalSec", Type: TypeInt,
				Doc: "seconds between health checks, 5 to 300 and longer than the check's timeout (6 s for HTTP, 10 s for HTTPS); unset, 30; refused for lambda"},
			{Name: "healthyThreshold", Type: TypeInt,
				Doc: "consecutive passed checks before a target is healthy, 2 to 10; unset, 5; refused for lambda"},
			{Name: "function", Type: TypeRef, RefKinds: []Kind{LambdaFunction}, RegionLocal: true, SameProvider: true, Holds: true,
				Doc: `the one Lambda function a lambda target group forwards to, {"ref": "aws/lambda-function/…"}, registered once Elastic Load Balancing may invoke it; refused for instance and ip targets`},
			tags(),
		},
		Attributes: []string{"arn"},
		Identity:   "arn",
		Example: map[string]any{"vpc": map[string]any{"ref": "aws/vpc/example"}, "protocol": "HTTP", "port": 8080.0,
			"healthCheckPath": "/health", "tags": map[string]any{"team": "web"}},
	},
	{
		Kind: ALBListener, Providers: []Provider{AWS},
		Doc: "a listener of an Application Load Balancer, forwarding to one target group; listeners have no name in Elastic Load Balancing, so its name is its Name tag",
		Fields: []Field{
			{Name: "loadBalancer", Type: TypeRef, Required: true, Replace: true, RefKinds: []Kind{ALB},
				RegionLocal: true, SameProvider: true, Holds: true,
				Doc: `the load balancer, {"ref": "aws/alb/…"}; a listener cannot move`},
			{Name: "port", Type: TypeInt, Required: true, Doc: "the port it listens on, 1 to 65535, one listener per port of a load balancer"},
			{Name: "protocol", Type: TypeString, Default: "HTTP", Doc: "HTTP or HTTPS"},
			{Name: "certificateArn", Type: TypeString, Expr: true,
				Doc: "the default certificate's ARN (ACM or IAM): required for HTTPS, refused for HTTP"},
			{Name: "targetGroup", Type: TypeRef, Required: true, RefKinds: []Kind{ALBTargetGroup},
				RegionLocal: true, SameProvider: true, Holds: true,
				Doc: `where the default action forwards, {"ref": "aws/alb-target-group/…"}`},
			tags(),
		},
		Attributes: []string{"arn"},
		Example: map[string]any{"loadBalancer": map[string]any{"ref": "aws/alb/example"}, "port": 80.0,
			"targetGroup": map[string]any{"ref": "aws/alb-target-group/example"}},
	},
	{
		Kind: SNSTopic, Providers: []Provider{AWS}, Identity: "arn",
		Doc: "an SNS topic, named by its topic name; a name ending in .fifo is a FIFO topic",
		Fields: []Field{
			{Name: "displayName", Type: TypeString,
				Doc: "the name shown as the sender of email and SMS notifications"},
			{Name: "fifo", Type: TypeBool, Replace: true,
				Doc: "a FIFO topic; it must agree with the name, which ends in .fifo for a FIFO topic and only then (unset, the name decides); SNS cannot convert a topic, so a change replaces it"},
			{Name: "contentBasedDeduplication", Type: TypeBool,
				Doc: "FIFO topics only: SNS derives each message's deduplication id from its body"},
			tags(),
		},
		Attributes: []string{"arn"},
		Example:    map[string]any{"displayName": "Orders", "tags": map[string]any{"team": "shop"}},
	},
	{
		Kind: SNSSubscription, Providers: []Provider{AWS},
		On: map[Provider]OnProvider{AWS: {Mark: MarkStatement}},
		Doc: "an SNS subscription of an SQS queue to a topic, with the statement in the queue's access policy that lets the topic send to it; " +
			"SNS gives a subscription no name and no tags, so that statement's Sid holds its name and the ownership mark",
		Fields: []Field{
			{Name: "topic", Type: TypeRef, Required: true, Replace: true, SameProvider: true, RegionLocal: true,
				RefKinds: []Kind{SNSTopic}, Doc: `the topic, {"ref": "aws/sns-topic/…"}; the subscription lives in the topic's region`},
			{Name: "queue", Type: TypeRef, Required: true, Replace: true, SameProvider: true, RegionLocal: true,
				RefKinds: []Kind{Queues}, Doc: `the queue the topic delivers to, {"ref": "aws/queues/…"}, in the topic's region and account`},
			{Name: "rawMessageDelivery", Type: TypeBool, Default: false,
				Doc: "deliver the message body alone, without SNS's JSON envelope"},
			{Name: "filterPolicy", Type: TypeString, Compare: CompareJSON,
				Doc: `a JSON object matched against each message's attributes, such as {"event": ["created"]}; only matching messages are delivered ("" for none)`},
		},
		Attributes: []string{"arn"},
		Example: map[string]any{"topic": map[string]any{"ref": "aws/sns-topic/example"}, "queue": map[string]any{"ref": "aws/queues/example"},
			"rawMessageDelivery": true, "filterPolicy": `{"event": ["created"]}`},
	},
	{
		Kind: Route53Zone, Providers: []Provider{AWS}, Global: true,
		Doc: "a Route 53 public hosted zone, named by its domain in lowercase without the trailing dot (example.com)",
		Fields: []Field{
			{Name: "comment", Type: TypeString, Doc: "the zone's comment, at most 256 characters"},
			tags(),
		},
		Attributes:  []string{"zoneId", "arn", "nameServers"},
		Identity:    "zoneId",
		Example:     map[string]any{"comment": "the shop's public zone", "tags": map[string]any{"team": "web"}},
		ExampleName: "example.com",
	},
	{
		Kind: Route53Record, Providers: []Provider{AWS}, Global: true,
		On: map[Provider]OnProvider{AWS: {Mark: MarkCompanion}},
		Doc: "a Route 53 record set, named FQDN:TYPE in lowercase without the trailing dot (www.example.com:A; " +
			"the apex example.com:MX, a wildcard *.example.com:A); its mark is a companion TXT record beside it, so its zone may be another fleet's",
		Fields: []Field{
			{Name: "zone", Type: TypeRef, Required: true, Replace: true, SameProvider: true, Holds: true, Wired: true, RefKinds: []Kind{Route53Zone},
				Doc: `the hosted zone holding the record, {"ref": "aws/route53-zone/…"}: the name's FQDN is the zone's domain or inside it`},
			{Name: "ttl", Type: TypeInt, Doc: "seconds resolvers may keep the values; required with values, refused with an alias"},
			{Name: "values", Type: TypeStringList, Compare: CompareSet,
				Doc: `the record's values, as Route 53 writes them (a TXT value in double quotes, an MX value "10 mail.example.com"); not with an alias`},
			{Name: "aliasDnsName", Type: TypeString, Expr: true,
				Doc: "an alias record's target (a load balancer's dnsName, a CloudFront domain), instead of values"},
			{Name: "aliasZoneId", Type: TypeString, Expr: true, Doc: "the hosted zone id of the alias target, set with aliasDnsName"},
			{Name: "evaluateTargetHealth", Type: TypeBool, Doc: "an alias answers only while its target is healthy (alias only; false when unset)"},
		},
		Attributes:  []string{"fqdn", "arn"},
		Example:     map[string]any{"zone": map[string]any{"ref": "aws/route53-zone/example.com"}, "ttl": 300.0, "values": []any{"192.0.2.10"}},
		ExampleName: "www.example.com:A",
	},
	{
		Kind: KMSKey, Providers: []Provider{AWS},
		Doc: "a KMS key, named by its Name tag: a key has only an id, and an alias is a resource of its own (kms-alias)",
		Fields: []Field{
			{Name: "description", Type: TypeString, Doc: "the key's description"},
			{Name: "keyUsage", Type: TypeString, Default: "ENCRYPT_DECRYPT", Replace: true,
				Doc: `"ENCRYPT_DECRYPT", "SIGN_VERIFY", "GENERATE_VERIFY_MAC" or "KEY_AGREEMENT", fixed at create`},
			{Name: "keySpec", Type: TypeString, Default: "SYMMETRIC_DEFAULT", Replace: true,
				Doc: `the key material's type, such as "SYMMETRIC_DEFAULT", "RSA_2048", "ECC_NIST_P256" or "HMAC_256", fixed at create`},
			{Name: "enableKeyRotation", Type: TypeBool, Default: false,
				Doc: "yearly automatic rotation of the key material; symmetric encryption keys only"},
			{Name: "deletionWindowDays", Type: TypeInt, Default: 30.0, Compare: CompareNever,
				Doc: "days, 7 to 30, between a delete and KMS deleting the key; CancelKeyDeletion undoes a delete until then"},
			tags(),
		},
		Attributes: []string{"arn", "keyId"},
		Identity:   "keyId",
		DeleteNote: "KMS only schedules a key's deletion: the key is gone for infra at once and deleted after its deletionWindowDays " +
			"(7 to 30; 30 for a key no longer declared); aws kms cancel-key-deletion undoes it until then",
		Example: map[string]any{"description": "the example key", "enableKeyRotation": true, "deletionWindowDays": 7.0,
			"tags": map[string]any{"team": "example"}},
	},
	{
		Kind: KMSAlias, Providers: []Provider{AWS},
		On:  map[Provider]OnProvider{AWS: {Mark: MarkNamePrefix}},
		Doc: "a KMS alias, alias/NAME (NAME holds no '/'); KMS aliases take no tags, so the name starts with <fleet>-, the ownership mark",
		Fields: []Field{
			{Name: "key", Type: TypeRef, Required: true, RefKinds: []Kind{KMSKey}, RegionLocal: true, SameProvider: true,
				Doc: `the key the alias names, {"ref": "aws/kms-key/…"}; a change points the alias at another key`},
		},
		Attributes: []string{"arn"},
		Example:    map[string]any{"key": map[string]any{"ref": "aws/kms-key/example"}},
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
