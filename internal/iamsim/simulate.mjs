// Reads {account, policy, requests} on stdin and writes one
// {decision, error} per request: the identity policy of a role in the
// account, evaluated by @cloud-copilot/iam-simulate.
import { isWildcardOnlyAction, runSimulation } from '@cloud-copilot/iam-simulate'

let input = ''
for await (const chunk of process.stdin) input += chunk
const { account, policy, requests } = JSON.parse(input)

const out = []
for (const r of requests) {
  // An action that takes no resource (a listing) is asked on "*".
  const [service, action] = r.action.split(':')
  const resource = (await isWildcardOnlyAction(service, action)) ? '*' : r.resource
  // A KMS key's own policy must let the account's IAM policies grant its
  // use; the default key policy, which KMS gives a key made without one
  // (as infra makes them), does.
  const resourcePolicy = service === 'kms' && resource.includes(':key/') ? {
    Version: '2012-10-17',
    Statement: [{ Sid: 'Enable IAM User Permissions', Effect: 'Allow', Principal: { AWS: `arn:aws:iam::${account}:root` }, Action: 'kms:*', Resource: '*' }],
  } : undefined
  const result = await runSimulation({
    identityPolicies: [{ name: 'executor', policy }],
    resourcePolicy,
    serviceControlPolicies: [],
    resourceControlPolicies: [],
    request: {
      principal: `arn:aws:iam::${account}:role/infra-executor-role`,
      action: r.action,
      resource: { resource, accountId: account },
      contextVariables: r.context ?? {},
    },
    additionalSettings: { s3: { bucketAbacEnabled: !!r.bucketAbac } },
  }, {})
  if (result.resultType === 'error') {
    out.push({ decision: '', error: JSON.stringify(result.errors) })
  } else {
    out.push({ decision: result.overallResult, error: '' })
  }
}
process.stdout.write(JSON.stringify(out))
