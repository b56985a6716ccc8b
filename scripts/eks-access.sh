#!/usr/bin/env bash
# Gives a deployed Tidegate stack's functions access to its EKS clusters: for each REGION=CLUSTER
# of the stack's Regions parameter, an access entry for the API, dispatch and reconcile roles with
# the AmazonEKSEditPolicy (create and delete Jobs, Pods and Secrets; read pods, events and logs).
# The webhook function never reaches a cluster and gets none. The reconcile role's entry is also
# in the Kubernetes group tidegate-isolation, which scripts/eks-isolation-rbac.yaml (apply it
# once per cluster with kubectl) lets keep each tenant namespace's ResourceQuota and LimitRange.
# Safe to run again: an entry or an association that already exists is left as it is, but for
# the reconcile role's group, which is set.
#
# Usage: scripts/eks-access.sh STACK_NAME   (needs the AWS CLI v2 and eks:CreateAccessEntry,
# eks:AssociateAccessPolicy and cloudformation:DescribeStacks on the caller's credentials)
set -euo pipefail

say() { printf 'tidegate eks-access: %s\n' "$*" >&2; }

stack=${1:?usage: scripts/eks-access.sh STACK_NAME}
policy=arn:aws:eks::aws:cluster-access-policy/AmazonEKSEditPolicy

query() { aws cloudformation describe-stacks --stack-name "$stack" --query "$1" --output text; }
regions=$(query "Stacks[0].Parameters[?ParameterKey=='Regions'].ParameterValue")
[ -n "$regions" ] || { say "stack $stack has no Regions parameter: is it a Tidegate stack?"; exit 1; }

roles=()
for output in ApiRoleArn DispatchRoleArn ReconcileRoleArn; do
  arn=$(query "Stacks[0].Outputs[?OutputKey=='$output'].OutputValue")
  [ -n "$arn" ] || { say "stack $stack has no $output output"; exit 1; }
  roles+=("$arn")
done
reconcile=${roles[2]}
isolation_group=tidegate-isolation

IFS=, read -ra pairs <<<"$regions"
for pair in "${pairs[@]}"; do
  region=${pair%%=*} cluster=${pair#*=}
  for role in "${roles[@]}"; do
    say "$cluster ($region): $role"
    groups=()
    [ "$role" = "$reconcile" ] && groups=(--kubernetes-groups "$isolation_group")
    if ! out=$(aws eks create-access-entry --region "$region" --cluster-name "$cluster" \
      --principal-arn "$role" --type STANDARD "${groups[@]}" 2>&1); then
      grep -q ResourceInUseException <<<"$out" || { say "$out"; exit 1; }
      if [ ${#groups[@]} -gt 0 ]; then
        aws eks update-access-entry --region "$region" --cluster-name "$cluster" \
          --principal-arn "$role" "${groups[@]}" >/dev/null
      fi
    fi
    aws eks associate-access-policy --region "$region" --cluster-name "$cluster" \
      --principal-arn "$role" --policy-arn "$policy" --access-scope type=cluster >/dev/null
  done
done
say "done: ${#pairs[@]} cluster(s), ${#roles[@]} roles each"
say "on each cluster, once: kubectl apply -f scripts/eks-isolation-rbac.yaml (the beat's ResourceQuotas and LimitRanges)"
