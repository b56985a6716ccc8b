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
# It then checks, and only reads, what README's cluster requirements ask of every node's instance
# metadata: IMDSv2 required with a hop limit of 1, so that no pod reaches the node role's
# credentials. It reads each managed node group's launch template (what its next nodes get) and
# the metadata options of the cluster's running nodes (what they have now), and warns, naming the
# node group or instance, what it found and what to set. Nodes Karpenter starts are not node
# groups: their running instances are read by the cluster's tag, and README says how to check
# their EC2NodeClass.
#
# Usage: scripts/eks-access.sh STACK_NAME   (needs the AWS CLI v2 and eks:CreateAccessEntry,
# eks:AssociateAccessPolicy and cloudformation:DescribeStacks on the caller's credentials; the
# metadata check also eks:ListNodegroups, eks:DescribeNodegroup, ec2:DescribeLaunchTemplateVersions
# and ec2:DescribeInstances, and says what it could not read without them)
set -euo pipefail

say() { printf 'tidegate eks-access: %s\n' "$*" >&2; }

# imds_warnings counts the metadata check's warnings, for the summary at the end.
imds_warnings=0
warn() {
  say "WARNING: $*"
  imds_warnings=$((imds_warnings + 1))
}

# imds_problem prints what falls short in HttpTokens $1 and HttpPutResponseHopLimit $2, as the AWS
# CLI's text output shows them ("None" when unset), or nothing when they are required and 1.
imds_problem() {
  local tokens=$1 hops=$2 found=()
  case $tokens in
    required) ;;
    None | "") found+=("HttpTokens unset (the AMI's or the account's default decides)") ;;
    *) found+=("HttpTokens=$tokens (IMDSv1 answers without a token)") ;;
  esac
  case $hops in
    1) ;;
    None | "") found+=("HttpPutResponseHopLimit unset (EKS or EC2 picks it: 2 for a custom AMI, EKS's docs say)") ;;
    *) found+=("HttpPutResponseHopLimit=$hops (a pod's request reaches the metadata service)") ;;
  esac
  local sep="" f
  for f in "${found[@]}"; do
    printf '%s%s' "$sep" "$f"
    sep="; "
  done
}

# check_node_group checks the launch template of node group $3 of cluster $2 in region $1.
check_node_group() {
  local region=$1 cluster=$2 group=$3 info lt_id lt_version ami tokens hops problem
  local where="$cluster ($region) node group $group"
  if ! info=$(aws eks describe-nodegroup --region "$region" --cluster-name "$cluster" --nodegroup-name "$group" \
    --query '[nodegroup.launchTemplate.id, nodegroup.launchTemplate.version, nodegroup.amiType]' --output text 2>&1); then
    warn "$where: could not read it to check its instance metadata: $info"
    return
  fi
  read -r lt_id lt_version ami <<<"$info"
  if [ "$lt_id" = None ]; then
    # EKS made the node group's launch template itself. Its user guide documents the default
    # as IMDSv2 required with a hop limit of 1 for AL2023 node groups without a launch template
    # of their own, and no such default for other AMI types (Bottlerocket's has been seen at 2).
    case $ami in
      AL2023_*) say "$where: no launch template of its own; EKS's defaults for $ami are HttpTokens=required and HttpPutResponseHopLimit=1 (its running nodes are read below)" ;;
      *) warn "$where: no launch template of its own, so EKS's defaults for $ami apply, and EKS documents IMDSv2 required with a hop limit of 1 as the default for AL2023 alone (Bottlerocket's has been seen at a hop limit of 2); make a node group with a launch template that sets HttpTokens=required and HttpPutResponseHopLimit=1 and move its work there (a node group made without a launch template cannot be given one)" ;;
    esac
    return
  fi
  [ "$lt_version" != None ] || lt_version=\$Default
  if ! info=$(aws ec2 describe-launch-template-versions --region "$region" --launch-template-id "$lt_id" \
    --versions "$lt_version" --output text \
    --query 'LaunchTemplateVersions[0].LaunchTemplateData.MetadataOptions.[HttpTokens, HttpPutResponseHopLimit]' 2>&1); then
    warn "$where: could not read its launch template $lt_id version $lt_version: $info"
    return
  fi
  read -r tokens hops <<<"$info"
  problem=$(imds_problem "$tokens" "$hops")
  if [ -n "$problem" ]; then
    warn "$where: launch template $lt_id version $lt_version has $problem; set HttpTokens=required and HttpPutResponseHopLimit=1 in a new version and move the node group to it (aws eks update-nodegroup-version --launch-template id=$lt_id,version=NEW), which replaces its nodes"
  else
    say "$where: launch template $lt_id version $lt_version requires IMDSv2 with a hop limit of 1"
  fi
}

# check_running_nodes checks the metadata options of the running instances of cluster $2 in
# region $1: managed node groups tag theirs eks:cluster-name, Karpenter and self-managed groups
# kubernetes.io/cluster/NAME. An instance tagged neither is not seen (README has the command to
# read one by hand).
check_running_nodes() {
  local region=$1 cluster=$2 filter out lines="" id tokens hops problem seen=0 off=0
  for filter in "Name=tag:eks:cluster-name,Values=$cluster" "Name=tag:kubernetes.io/cluster/$cluster,Values=owned,shared"; do
    if ! out=$(aws ec2 describe-instances --region "$region" --output text \
      --filters "$filter" "Name=instance-state-name,Values=pending,running" \
      --query 'Reservations[].Instances[].[InstanceId, MetadataOptions.HttpTokens, MetadataOptions.HttpPutResponseHopLimit]' 2>&1); then
      warn "$cluster ($region): could not read its nodes' instance metadata options: $out"
      return
    fi
    lines+=$out$'\n'
  done
  while read -r id tokens hops; do
    [ -n "$id" ] || continue
    seen=$((seen + 1))
    problem=$(imds_problem "$tokens" "$hops")
    if [ -n "$problem" ]; then
      off=$((off + 1))
      warn "$cluster ($region) instance $id has $problem; aws ec2 modify-instance-metadata-options --region $region --instance-id $id --http-tokens required --http-put-response-hop-limit 1 fixes it until the instance is replaced, and its launch template or EC2NodeClass decides for the next"
    fi
  done < <(sort -u <<<"$lines")
  say "$cluster ($region): $seen running node(s) read, $off short of IMDSv2 required with a hop limit of 1"
}

# check_node_metadata checks every managed node group of cluster $2 in region $1, then its nodes.
check_node_metadata() {
  local region=$1 cluster=$2 out groups=() group
  if ! out=$(aws eks list-nodegroups --region "$region" --cluster-name "$cluster" --query 'nodegroups' --output text 2>&1); then
    warn "$cluster ($region): could not list its node groups to check their instance metadata: $out"
  else
    read -ra groups <<<"$out"
    for group in "${groups[@]}"; do
      check_node_group "$region" "$cluster" "$group"
    done
  fi
  check_running_nodes "$region" "$cluster"
}

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
  check_node_metadata "$region" "$cluster"
done
say "done: ${#pairs[@]} cluster(s), ${#roles[@]} roles each"
say "on each cluster, once: kubectl apply -f scripts/eks-isolation-rbac.yaml (the beat's ResourceQuotas and LimitRanges)"
if [ "$imds_warnings" -gt 0 ]; then
  say "$imds_warnings instance metadata warning(s) above: fix each (or grant the reads one lacked); until then a pod on those nodes may reach the node role's credentials (README: Isolation, what the clusters must provide)"
else
  say "instance metadata: every node group and running node read requires IMDSv2 with a hop limit of 1 (Karpenter's EC2NodeClasses are not read: README says how)"
fi
