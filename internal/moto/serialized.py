# Runs moto_server with S3 object writes serialized.
#
# moto checks a conditional write (If-None-Match: *, If-Match) and then
# writes, in two steps, on a threaded server: two racing lock writes can both
# succeed. Real S3 checks and writes in one step. Holding one lock around
# every object write and delete makes moto behave like S3, so that a test of
# infra's S3 lock shows what the lock does, not the emulator's race.
#
# It also builds AWS's managed policies (MOTO_IAM_LOAD_MANAGED_POLICIES,
# which the tests need: real accounts have them) once per account, not at
# every reset: moto parses and builds all 1,485 of them for each IAM backend
# it makes, about half a second of the server's one core per reset, and the
# tests reset the emulator hundreds of times. Each backend gets copies, so
# what one test attaches is not seen by the next.
#
# And it pages SQS ListQueues as SQS does: moto returns at most 1,000
# queues and never a NextToken, whatever MaxResults says, so a listing of
# more than 1,000 queues reads as 1,000. SQS takes MaxResults (1 to 1,000)
# and answers a NextToken while more remain; without MaxResults it returns
# up to 1,000 and no token. The token here is the offset, opaque to the SDK.
#
# And it serves S3's bucket ABAC switch (PutBucketAbac, GetBucketAbac, PUT
# and GET /?abac), which moto 5.2 answers as a second CreateBucket and a
# bucket listing. S3 refuses PutBucketTagging and DeleteBucketTagging on a
# bucket whose ABAC is on (its tags go through S3 Control's TagResource and
# UntagResource then); so does this, with InvalidRequest, so that a driver
# still calling them fails here as it would on AWS. S3 Control's tagging of
# a bucket ARN moto serves already, on the same tags S3 reads.
#
# And it keeps the tags CreateBucket carries (CreateBucketConfiguration's
# Tags), which S3 applies with the bucket and moto 5.2 drops. infra works
# without this (on stock moto it finds the tags dropped and writes them with
# PutBucketTagging; its stock-moto tests hold it to that), but a test of the
# executor's bucket calls, or of their count, must see what AWS does.
#
# And it answers the Tagging API's GetResources pages from a snapshot taken
# at the first page, each token naming the snapshot and an offset: moto
# keeps a live generator under each token, so a page the SDK sends again
# (its answer was lost) shares the generator with the first attempt, and
# the two split the resources between them; a later page misses those the
# lost answer held. With the snapshot, the same token gives the same page,
# as a retry needs.
#
# And it makes RunInstances idempotent on its ClientToken, as EC2 is: a
# request that repeats a token gets the reservation the first one made.
# moto keeps the token on the instance but launches again, so an SDK retry
# of a request whose answer was lost makes a second instance, which AWS
# never does.
#
# And it answers a CreateHostedZone whose CallerReference was used before
# (by a zone that exists or was deleted) with HostedZoneAlreadyExists (409),
# as Route 53 does: moto makes another zone, so an SDK retry of a create
# whose answer was lost makes a second zone of the domain, which AWS never
# does.
#
# And it keeps one listener to a port of a load balancer, as ELBv2 does:
# moto looks the port up among the listeners' ARNs, never finds it, and
# makes a second listener on the port. ELBv2 answers a CreateListener
# whose settings are the existing listener's with that listener (so an
# SDK retry of one whose answer was lost makes nothing), and one whose
# settings differ with DuplicateListener.
#
# And it keeps one load balancer to a name, as ELBv2 does: moto makes
# another of the name at each CreateLoadBalancer, with an ARN of its own.
# ELBv2's create is idempotent: one whose settings are the existing load
# balancer's answers that load balancer (so an SDK retry of one whose
# answer was lost makes nothing), and one whose settings differ
# DuplicateLoadBalancerName.
#
# And it refuses an AddPermission whose StatementId the function's policy
# holds already, with ResourceConflictException (409), as Lambda does:
# moto appends a second statement of the id, so an SDK retry of a grant
# whose answer was lost doubles it, which AWS never does.
#
# Arguments are moto_server's (-H HOST -p PORT). internal/moto writes this
# file next to the server's log and runs it with moto's own interpreter.
import copy
import json
import re
import sys
import threading

import xmltodict

from moto.core.responses import ActionResult
from moto.resourcegroupstaggingapi.exceptions import ResourceGroupsTaggingAPIError as RESTError
from moto.ec2.models.instances import InstanceBackend
from moto.awslambda.exceptions import LambdaClientError
from moto.awslambda.models import LambdaBackend
from moto.elbv2.exceptions import DuplicateListenerError, DuplicateLoadBalancerName
from moto.elbv2.models import ELBv2Backend, FakeAction
from moto.iam.models import IAMBackend
from moto.moto_api._internal import mock_random
from moto.resourcegroupstaggingapi.models import ResourceGroupsTaggingAPIBackend
from moto.route53.exceptions import Route53ClientError
from moto.route53.models import Route53Backend
from moto.s3.exceptions import S3ClientError
from moto.s3.responses import S3Response
from moto.server import main
from moto.sqs.responses import SQSResponse
from urllib.parse import urlparse

_object_writes = threading.Lock()


def _serialized(method):
    def wrapper(self, *args, **kwargs):
        with _object_writes:
            return method(self, *args, **kwargs)

    wrapper.__name__ = method.__name__
    wrapper.__doc__ = method.__doc__
    return wrapper


S3Response.put_object = _serialized(S3Response.put_object)
S3Response.delete_object = _serialized(S3Response.delete_object)

_built_policies = {}
_build_policies = IAMBackend._init_aws_policies


def _copy(policy):
    c = copy.copy(policy)
    for name, value in vars(policy).items():
        if isinstance(value, (list, dict, set)):
            setattr(c, name, copy.copy(value))
    return c


def _aws_policies(self):
    key = (self.account_id, self.region_name)
    if key not in _built_policies:
        _built_policies[key] = _build_policies(self)
    return [_copy(p) for p in _built_policies[key]]


IAMBackend._init_aws_policies = _aws_policies


def _list_queues(self):
    prefix = self._get_param("QueueNamePrefix") or ""
    limit = self._get_param("MaxResults")
    start = int(self._get_param("NextToken") or 0)
    names = [n for n in self.sqs_backend.queues if n.startswith(prefix)]
    size = int(limit) if limit else 1000
    page = names[start : start + size]
    request_url = urlparse(self.uri)
    result = {}
    if page:
        result["QueueUrls"] = [self.sqs_backend.queues[n].url(request_url) for n in page]
    if limit and start + size < len(names):
        result["NextToken"] = str(start + size)
    return ActionResult(result)


SQSResponse.list_queues = _list_queues


_ABAC_STATUS = re.compile(r"<Status>\s*(Enabled|Disabled)\s*</Status>")


def _abac_enabled(response, bucket_name):
    return getattr(response.backend.get_bucket(bucket_name), "abac_status", "Disabled") == "Enabled"


_bucket_put = S3Response._bucket_response_put
_bucket_get = S3Response._bucket_response_get
_bucket_delete = S3Response._bucket_response_delete


def _put_with_abac(self, request, bucket_name, querystring):
    if "abac" in querystring:
        status = _ABAC_STATUS.search(self.body.decode("utf-8"))
        if not status:
            raise S3ClientError("MalformedXML", "The XML you provided was not well-formed")
        self.backend.get_bucket(bucket_name).abac_status = status.group(1)
        return 200, {}, ""
    if "tagging" in querystring and _abac_enabled(self, bucket_name):
        raise S3ClientError("InvalidRequest", "ABAC is enabled on this bucket: tag it with TagResource")
    created = _bucket_put(self, request, bucket_name, querystring)
    if not querystring and self.body:
        tags = _create_tags(self.body)
        if tags:
            self.backend.put_bucket_tagging(bucket_name, tags)
    return created


def _create_tags(body):
    try:
        conf = xmltodict.parse(body).get("CreateBucketConfiguration") or {}
    except Exception:
        return {}  # moto's own CreateBucket has answered it already
    tags = (conf.get("Tags") or {}).get("Tag") or []
    if isinstance(tags, dict):
        tags = [tags]
    return {t["Key"]: t.get("Value") or "" for t in tags if t.get("Key")}


def _get_with_abac(self, bucket_name, querystring):
    if "abac" in querystring:
        status = getattr(self.backend.get_bucket(bucket_name), "abac_status", "Disabled")
        body = '<?xml version="1.0" encoding="UTF-8"?><AbacStatus><Status>%s</Status></AbacStatus>' % status
        return 200, {"Content-Type": "application/xml"}, body
    return _bucket_get(self, bucket_name, querystring)


def _delete_with_abac(self, bucket_name, querystring):
    if "tagging" in querystring and _abac_enabled(self, bucket_name):
        raise S3ClientError("InvalidRequest", "ABAC is enabled on this bucket: untag it with UntagResource")
    return _bucket_delete(self, bucket_name, querystring)


S3Response._bucket_response_put = _put_with_abac
S3Response._bucket_response_get = _get_with_abac
S3Response._bucket_response_delete = _delete_with_abac


_snapshots = {}
_snapshots_lock = threading.Lock()


def _get_resources(self, pagination_token=None, resources_per_page=50, tags_per_page=100,
                   tag_filters=None, resource_type_filters=None):
    if pagination_token:
        sid, _, start = pagination_token.partition(":")
        with _snapshots_lock:
            items = _snapshots.get(sid)
        if items is None or not start.isdigit():
            raise RESTError("PaginationTokenExpiredException", "Token does not exist")
        start = int(start)
    else:
        items = list(self._get_resources_generator(tag_filters=tag_filters, resource_type_filters=resource_type_filters))
        sid, start = str(mock_random.uuid4()), 0
        with _snapshots_lock:
            _snapshots[sid] = items
            while len(_snapshots) > 64:  # the oldest scans are long over
                del _snapshots[next(iter(_snapshots))]
    page, tags, i = [], 0, start
    while i < len(items):
        n = len(items[i]["Tags"])
        if len(page) >= resources_per_page or (page and tags + n >= tags_per_page):
            break
        page.append(items[i])
        tags += n
        i += 1
    if i >= len(items):
        return None, page
    return "%s:%d" % (sid, i), page


ResourceGroupsTaggingAPIBackend.get_resources = _get_resources

_run_instances = InstanceBackend.run_instances
_creates = threading.Lock()


def _run_instances_once(self, image_id, count, user_data, security_group_names, **kwargs):
    token = kwargs.get("client_token")
    with _creates:
        if token and token != "ABCDE":  # moto's stand-in for an absent token
            for reservation in self.reservations.values():
                if reservation.instances and reservation.instances[0].client_token == token:
                    return reservation
        return _run_instances(self, image_id, count, user_data, security_group_names, **kwargs)


InstanceBackend.run_instances = _run_instances_once

_create_hosted_zone = Route53Backend.create_hosted_zone
_zone_creates = threading.Lock()


def _create_hosted_zone_once(self, name, private_zone, caller_reference=None, **kwargs):
    with _zone_creates:
        used = self.__dict__.setdefault("_used_caller_references", set())
        if caller_reference and caller_reference in used:
            raise Route53ClientError("HostedZoneAlreadyExists",
                                     "A hosted zone has already been created with the specified caller reference.")
        zone = _create_hosted_zone(self, name, private_zone, caller_reference=caller_reference, **kwargs)
        if caller_reference:
            used.add(caller_reference)
        return zone


Route53Backend.create_hosted_zone = _create_hosted_zone_once

_create_listener = ELBv2Backend.create_listener


def _create_listener_once(self, load_balancer_arn, protocol, port, ssl_policy, certificate, actions,
                          alpn_policy=None, tags=None):
    with _creates:
        balancer = self.load_balancers.get(load_balancer_arn)
        for listener in (balancer.listeners.values() if balancer else []):
            if str(listener.port) != str(port):
                continue
            wanted = [FakeAction(copy.deepcopy(a)).data for a in actions]
            if listener.protocol == (protocol or "").upper() and [a.data for a in listener.default_actions] == wanted:
                return listener
            raise DuplicateListenerError()
        return _create_listener(self, load_balancer_arn, protocol, port, ssl_policy, certificate, actions,
                                alpn_policy=alpn_policy, tags=tags)


ELBv2Backend.create_listener = _create_listener_once

_create_load_balancer = ELBv2Backend.create_load_balancer


def _create_load_balancer_once(self, name, security_groups, subnet_ids, subnet_mappings=None,
                               scheme="internet-facing", loadbalancer_type=None, ip_address_type="ipv4", tags=None):
    with _creates:
        for balancer in self.load_balancers.values():
            if balancer.name != name:
                continue
            mapped = [m["SubnetId"] for m in subnet_mappings or []]
            if (balancer.scheme == scheme and balancer.type == (loadbalancer_type or "application")
                    and sorted(s.id for s in balancer.subnets) == sorted(list(subnet_ids or []) + mapped)
                    and sorted(balancer.security_groups or []) == sorted(security_groups or [])):
                return balancer
            raise DuplicateLoadBalancerName()
        return _create_load_balancer(self, name, security_groups, subnet_ids, subnet_mappings=subnet_mappings,
                                     scheme=scheme, loadbalancer_type=loadbalancer_type,
                                     ip_address_type=ip_address_type, tags=tags)


ELBv2Backend.create_load_balancer = _create_load_balancer_once

_add_permission = LambdaBackend.add_permission


class _StatementIdTaken(LambdaClientError):
    code = 409

    def __init__(self, sid):
        super().__init__("ResourceConflictException", "The statement id (%s) provided already exists. "
                         "Please specify a new statement id, or remove the existing statement." % sid)


def _add_permission_once(self, function_name, qualifier, raw):
    with _creates:
        sid = (json.loads(raw) or {}).get("StatementId")
        fn = self.get_function(function_name, qualifier)
        if sid and any(st.get("Sid") == sid for st in fn.policy.statements):
            raise _StatementIdTaken(sid)
        return _add_permission(self, function_name, qualifier, raw)


LambdaBackend.add_permission = _add_permission_once

if __name__ == "__main__":
    sys.argv[0] = "moto_server"
    sys.exit(main(sys.argv[1:]))
