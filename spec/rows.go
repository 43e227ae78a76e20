package spec

// The ids of every rule that produces a diagnostic row, one constant each.
// The comment of each is its line in docs/diagnostics.md (the test renders
// the table from this file). An id is kebab-case and stable: readers of
// check and plan JSON match on it, so it is never renamed, and a rule that
// goes away takes its id with it.
const (
	// The document as a whole.

	// Compile was given no document at all.
	RowNoDocument RowID = "no-document"
	// The document has no apiVersion.
	RowMissingAPIVersion RowID = "missing-api-version"
	// The document's apiVersion is not one this build reads.
	RowUnknownAPIVersion RowID = "unknown-api-version"
	// An object (the document, an exclusion, a resource) has a key it does not take.
	RowUnknownKey RowID = "unknown-key"
	// The fleet name is not 1–63 characters of a-z, 0-9, '-' and '_' starting with a letter.
	RowInvalidFleetName RowID = "invalid-fleet-name"
	// A provider (in accounts, placement, an exclusion, a resource or a forget) is not one infra knows.
	RowUnknownProvider RowID = "unknown-provider"
	// An account id is not of its cloud's shape (12 digits on AWS, a UUID on Scaleway).
	RowInvalidAccountID RowID = "invalid-account-id"
	// A region is another cloud's; the evidence is the cloud's own regions.
	RowWrongCloudRegion RowID = "wrong-cloud-region"
	// A region is not in the cloud's table; the evidence is the cloud's regions.
	RowUnknownRegion RowID = "unknown-region"

	// Addresses, exclusions and forgets.

	// An address (of a resource, an exclusion or a forget) is not provider/kind/name.
	RowInvalidAddress RowID = "invalid-address"
	// A kind (of an exclusion or a resource) is not one infra knows.
	RowUnknownKind RowID = "unknown-kind"
	// The provider does not offer the kind (a resource or a forget).
	RowKindNotOffered RowID = "kind-not-offered"
	// A resource's name is empty, too long, or holds a space or a control character.
	RowInvalidName RowID = "invalid-name"
	// An exclusion's * is not at the end of the name.
	RowMisplacedWildcard RowID = "misplaced-wildcard"
	// An exclusion does not say why.
	RowExclusionWithoutWhy RowID = "exclusion-without-why"
	// A forget names a resource the document still declares.
	RowForgetDeclared RowID = "forget-declared"
	// An adopt names a resource the document does not declare.
	RowAdoptUndeclared RowID = "adopt-undeclared"
	// An adopt names the same resource twice.
	RowAdoptTwice RowID = "adopt-twice"

	// Resources.

	// Two resources have the same address.
	RowDuplicateAddress RowID = "duplicate-address"
	// Two declarations are one physical resource (an S3 bucket as object-store and s3-bucket); the evidence is the first.
	RowDuplicatePhysical RowID = "duplicate-physical-resource"
	// A resource has no region of its own and its cloud has no placement.
	RowMissingRegion RowID = "missing-region"
	// A spec holds a field its kind does not have.
	RowUnknownField RowID = "unknown-field"
	// A field's value is not of the field's type or shape.
	RowInvalidValue RowID = "invalid-value"
	// A secret's value is written as a plain string in the document.
	RowPlaintextSecret RowID = "plaintext-secret"
	// A composed secret reads nothing: it is a plaintext in disguise.
	RowComposedPlaintext RowID = "composed-plaintext-secret"
	// An instance type is not in infra's table.
	RowUnknownInstanceType RowID = "unknown-instance-type"
	// A required field is missing.
	RowMissingField RowID = "missing-field"
	// A field a portable kind needs on this cloud is missing.
	RowMissingFieldForCloud RowID = "missing-field-for-cloud"
	// A portable kind holds a field its cloud cannot express.
	RowFieldNotExpressible RowID = "field-not-expressible"
	// A portable kind holds a field its cloud has no use for (a warning).
	RowFieldIgnored RowID = "field-ignored"
	// A Scaleway queue or database lacks the fleet prefix its name carries as ownership mark.
	RowMissingFleetPrefix RowID = "missing-fleet-prefix"
	// A Scaleway Serverless SQL or GCP Cloud SQL capacity is not a whole number of vCPUs (on GCP, 1–96).
	RowFractionalCapacity RowID = "fractional-capacity"
	// A Scaleway IAM policy is an AWS policy ARN.
	RowAWSPolicyOnScaleway RowID = "aws-policy-on-scaleway"
	// A GCP service account's policy is not a role name.
	RowPolicyNotARole RowID = "policy-not-a-role"
	// A name the cloud's product refuses (GCP: each product's own rule).
	RowInvalidNameForCloud RowID = "invalid-name-for-cloud"
	// A value outside the range the cloud's product accepts (a Pub/Sub ack deadline).
	RowOutOfRangeForCloud RowID = "out-of-range-for-cloud"
	// A tag that GCP cannot hold as a label, or more tags than it holds.
	RowTagNotLabel RowID = "tag-not-a-label"
	// A GCP Cloud SQL capacity range: the instance does not scale (a warning).
	RowCapacityFixed RowID = "capacity-does-not-scale"
	// A product without tags or labels keeps the ownership mark and the tags in its description (a GCP service account, a Scaleway registry namespace), which they overflow.
	RowMarkDoesNotFit RowID = "mark-does-not-fit"
	// A Lambda function's code is not one zip (with its runtime and handler) or one image, or its packageType says the other.
	RowLambdaCode RowID = "lambda-code"
	// A Lambda function's zip has no codeSha256: the document was not loaded by infra, which fills it from the file.
	RowZipUnhashed RowID = "zip-unhashed"

	// A CIDR field's value is not an IPv4 block in canonical form (a malformed block, an IPv6 one, or host bits set).
	RowInvalidCIDR RowID = "invalid-cidr"

	// References between resources.

	// A reference (ref, observed, secretValue) names an address not in the document; the evidence is that address.
	RowDanglingReference RowID = "dangling-reference"
	// A reference names a resource of a kind the field does not accept; the evidence is the target.
	RowWrongKindReference RowID = "wrong-kind-reference"
	// An observed value reads an attribute the target does not publish; the evidence is the target.
	RowUnknownAttribute RowID = "unknown-attribute"
	// A field that must stay on its cloud refers to another cloud's resource; the evidence is the target.
	RowCrossCloudReference RowID = "cross-cloud-reference"
	// A region-local field refers to a resource in another region; the evidence is the target.
	RowCrossRegionReference RowID = "cross-region-reference"
	// A CIDR block is not inside the block of the resource it must lie within (a subnet's, inside its VPC's); the evidence is that resource.
	RowCIDROutside RowID = "cidr-outside"
	// Resources refer to each other in a cycle; the evidence is its members.
	RowCycle RowID = "cycle"

	// The plan: what the clouds and the ledger hold.

	// The ledger records resources of a cloud with no backend loaded; apply refuses.
	RowUnreachableCloud RowID = "unreachable-cloud"
	// A declared resource is also excluded, and is left alone (a warning).
	RowDeclaredExcluded RowID = "declared-excluded"
	// A declared resource exists but is not this fleet's, and is left alone (a warning); the evidence is its owner tag's value.
	RowForeignOwner RowID = "foreign-owner"
	// A forget names a resource the ledger does not record (a warning).
	RowForgetNotInLedger RowID = "forget-not-in-ledger"
	// A declared resource in adopt is not in the cloud: adopt takes over what exists and never creates.
	RowAdoptMissing RowID = "adopt-missing"
	// A declared resource in adopt carries another fleet's mark, which adopt never takes; the evidence is its owner tag's value.
	RowAdoptForeign RowID = "adopt-foreign"
	// A declared resource in adopt differs from what exists in a field that forces replacement: adopt never replaces what it takes over.
	RowAdoptReplace RowID = "adopt-replace"
	// A replace of a resource whose product keeps a deleted one's name (a Cloud SQL instance): it would delete it, then fail to make it again.
	RowReplaceKeptName RowID = "replace-kept-name"
	// A ledger row is excluded, and is left alone (a warning).
	RowLedgerExcluded RowID = "ledger-excluded"
	// A ledger row's resource is no longer this fleet's, and is left alone (a warning); the evidence is its owner tag's value.
	RowLedgerForeignOwner RowID = "ledger-foreign-owner"
	// A secret's fromEnv variable is not set in this run: an error in a plan whose create, replace or update sends a value that reads it (apply would fail there, halfway), a warning in check; the evidence is the variable's name.
	RowEnvUnset RowID = "env-unset"
	// A managed resource was made where the cloud could not keep a promise of infra's for it (a bucket at an endpoint without bucket ABAC), said at every plan (a warning); the evidence is the resources it holds for.
	RowCaveat RowID = "caveat"

	// The SDK (package fleet).

	// A fleet method was called on a nil *fleet.Fleet.
	RowNoFleet RowID = "no-fleet"
	// A cloud's account or default region is given twice, two ways; the evidence is the first.
	RowGivenTwice RowID = "given-twice"

	// Wiring across fleets (docs/wiring.md).

	// The claims record is older than a generation written since (it was rolled back), and the plan breaks a capability.
	RowClaimsRolledBack RowID = "claims-rolled-back"
	// An interface's name is not 1–63 characters of a-z, 0-9, '-' and '_' starting with a letter.
	RowInterfaceName RowID = "interface-name"
	// An export's name is not 1–63 characters of a-z, 0-9, '-' and '_' starting with a letter.
	RowExportName RowID = "export-name"
	// An interface has no exports.
	RowInterfaceEmpty RowID = "interface-empty"
	// An interface is written with a hash its exports do not have: it was edited by hand.
	RowInterfaceHash RowID = "interface-hash"
	// An export's type is unknown, or a binding's value is not of the export's type.
	RowExportType RowID = "export-type"
	// An export has no lifecycle or no locality bound: a missing bound is a permission not given, not a default.
	RowBoundMissing RowID = "bound-missing"
	// A lifecycle or locality tag is not one infra knows.
	RowBoundUnknown RowID = "bound-unknown"
	// A binding is known later, or usable more widely, than its export's bound allows.
	RowBoundWidened RowID = "bound-widened"
	// A secret export is bound to a public value, or declared public.
	RowSecrecyLowered RowID = "secrecy-lowered"
	// An export's secrecy is neither public nor secret.
	RowSecrecyUnknown RowID = "secrecy-unknown"
	// A capability's name is not 1–63 characters of a-z, 0-9, '-' and '_' starting with a letter.
	RowCapabilityName RowID = "capability-name"
	// A capability's consumers is neither one nor many.
	RowConsumersUnknown RowID = "consumers-unknown"
	// A capability or a slot names an interface the document does not define.
	RowInterfaceUnknown RowID = "interface-unknown"
	// A capability does not bind one of its interface's exports.
	RowExportUnbound RowID = "export-unbound"
	// A binding, a requirement or a field reads an export the interface does not have.
	RowExportUnknown RowID = "export-unknown"
	// A binding is not a literal, an observed attribute of this fleet or one of its secrets.
	RowBindingInvalid RowID = "binding-invalid"
	// exposes names a capability the fleet does not provide.
	RowExposeUnknown RowID = "expose-unknown"
	// A slot's name is not 1–63 characters of a-z, 0-9, '-' and '_' starting with a letter.
	RowSlotName RowID = "slot-name"
	// A slot is wired to nothing.
	RowWireUnfilled RowID = "wire-unfilled"
	// wires names a slot the fleet does not use.
	RowWireUnknownSlot RowID = "wire-unknown-slot"
	// A wire's fleet is not a valid fleet name.
	RowWireFleet RowID = "wire-fleet"
	// A slot is wired to this fleet itself.
	RowWireSelf RowID = "wire-self"
	// A wire names no capability.
	RowWireCapability RowID = "wire-capability"
	// A requirement's operator is not one infra knows.
	RowPredicateOp RowID = "predicate-op"
	// A requirement's value does not suit its operator.
	RowPredicateValue RowID = "predicate-value"
	// A requirement's severity is neither require nor want.
	RowPredicateSeverity RowID = "predicate-severity"
	// A requirement reads a secret export, whose value is never compared.
	RowSecretPredicate RowID = "secret-predicate"
	// A field reads a slot the fleet does not use.
	RowUseUnknownSlot RowID = "use-unknown-slot"
	// A secret export feeds a field that does not take a secret.
	RowSecretExportMisused RowID = "secret-export-misused"
	// The published record of the fleet a slot is wired to cannot be read.
	RowWireUnreadable RowID = "wire-unreadable"
	// The fleet a slot is wired to has published nothing: it has not applied, or its state is elsewhere.
	RowWireFleetUnknown RowID = "wire-fleet-unknown"
	// The fleet a slot is wired to provides no such capability; the evidence lists what it exposes.
	RowWireCapabilityUnknown RowID = "wire-capability-unknown"
	// The fleet a slot is wired to provides the capability but does not expose it.
	RowWireUnexposed RowID = "wire-unexposed"
	// The capability a slot is wired to provides another interface than the slot uses.
	RowWireInterface RowID = "wire-interface"
	// Two fleets carry different definitions of one interface; the evidence gives both hashes.
	RowInterfaceMismatch RowID = "interface-mismatch"
	// A required predicate fails on the provider's published value.
	RowRequirementFailed RowID = "requirement-failed"
	// A wanted predicate fails on the provider's published value (a warning).
	RowRequirementWanted RowID = "requirement-wanted"
	// A resource reads a region-local export from another region.
	RowLocalityRegion RowID = "locality-region"
	// A resource with no region of its own is placed in the region of a region-local value it reads (a warning).
	RowRegionFollowed RowID = "region-followed"
	// A consumers: one capability is already claimed by another fleet; the row names the holder.
	RowConsumerHeld RowID = "consumer-held"
	// A provider's plan would break a capability other fleets claim (remove, unexpose, change its interface, or delete or replace what an export reads); it names every consumer.
	RowConsumerProtected RowID = "consumer-protected"
	// A resource takes an account-local (or region-local) export out of its account: onto another cloud, or into another declared account.
	RowLocalityAccount RowID = "locality-account"
	// A public export fills a field that takes a secret (masterPasswordSecret, secretEnv).
	RowSecretExportExpected RowID = "secret-export-expected"
	// A reference field reads an export that is not a public string, where it takes the referent's identity (an ALB's subnets).
	RowWiredIdentity RowID = "wired-identity"

	// Components (docs/components.md).

	// The document's component map is inconsistent with its resources: a member names a resource the document lacks, a resource belongs to two members, an origin or placement is unknown.
	RowComponentMap RowID = "component-map"
	// A user setting writes a path the component fixed; the evidence names both places.
	RowComponentFixed RowID = "component-fixed"
	// A component's Fixed names a path that is none of its settings, members or their resources' fields (a misspelling would otherwise fix nothing, silently); the evidence is the Fixed call.
	RowComponentFixedUnknown RowID = "component-fixed-unknown"
	// Settings, a cut, a placement or a wire are written for a member the component does not have; the resolution lists its members.
	RowComponentMemberUnknown RowID = "component-member-unknown"
	// Settings, a placement or a wire are written for a member that was cut.
	RowComponentMemberCut RowID = "component-member-cut"
	// A member's use is neither bound by the component nor wired by the user (wire.<member>.<use>); the resolution lists what the fleet's wires could offer.
	RowComponentSlotUnfilled RowID = "component-slot-unfilled"
	// A member's placement contradicts the region of a region-local export it reads from another member; the evidence names both members, both regions and the export.
	RowComponentPlacement RowID = "component-placement"
	// A component binds a member's use to a capability of another interface, or to a capability the member does not offer.
	RowComponentBinding RowID = "component-binding"
	// A capability is provided (and so offered to other fleets) that the component re-exports from a member that was cut.
	RowComponentExposeCut RowID = "component-expose-cut"
	// A component declares its uses, provides and wires in its ask half, not through the body's fleet.
	RowComponentBodyWiring RowID = "component-body-wiring"
	// A component's members nest without end: a member of its ancestor's component with the same settings, deeper than 32 members, or past 10000 members in one instance; the evidence is the member's full path.
	RowComponentRecursion RowID = "component-recursion"

	// A use's reach is not a known one (one, all).
	RowReachUnknown RowID = "reach-unknown"
	// A wire's shape does not match its slot's reach: a list for reach one, one object for reach all.
	RowReachWire RowID = "reach-wire"
	// A field reads a reach-all slot where it takes one value, or a reach-one slot as a whole map.
	RowReachField RowID = "reach-field"
	// A reach-all slot reads a region-only export from capabilities in several regions.
	RowReachRegion RowID = "reach-region"
	// Two entries of a reach-all set have the same key (FLEET/REGION).
	RowReachKeyDuplicate RowID = "reach-key-duplicate"
	// A capability of a reach-all set has exports in several regions, so it has no one key.
	RowReachKeyAmbiguous RowID = "reach-key-ambiguous"

	// Policy hooks (docs/ci.md#policy).

	// The GitHub Action's policy command refused the plan; the row blocks it.
	RowPolicyFailed RowID = "policy-failed"
)
