# The estate's function: it records each request it is sent in the table
# the fleet gives it (TABLE), with the network and zone it was wired to.
import json
import os
import time

import boto3

table = boto3.resource("dynamodb").Table(os.environ["TABLE"])


def handler(event, context):
    table.put_item(Item={"id": context.aws_request_id, "at": int(time.time()), "path": event.get("path", "/")})
    return {
        "statusCode": 200,
        "headers": {"content-type": "application/json"},
        "body": json.dumps({"domain": os.environ["DOMAIN"], "vpc": os.environ["VPC_ID"]}),
    }
