package samcheck

import (
	"maps"
	"slices"

	"github.com/awslabs/goformation/v7/cloudformation/policies"
	"github.com/awslabs/goformation/v7/cloudformation/s3"
)

// checkBuckets checks that every bucket blocks public access, is encrypted, owns its objects,
// refuses plain-HTTP requests and survives stack deletion, and that the sources bucket exists.
func checkBuckets(t *Template) []Problem {
	var ps []Problem
	buckets := t.CFN.GetAllS3BucketResources()
	if _, ok := buckets[sourcesBucket]; !ok {
		ps = append(ps, problem(RuleBucket, sourcesBucket, "missing: hosted apps' release sources are kept in this %s", typeBucket))
	}
	for _, id := range slices.Sorted(maps.Keys(buckets)) {
		b := buckets[id]
		if p := b.PublicAccessBlockConfiguration; p == nil || !isTrue(p.BlockPublicAcls) || !isTrue(p.BlockPublicPolicy) || !isTrue(p.IgnorePublicAcls) || !isTrue(p.RestrictPublicBuckets) {
			ps = append(ps, problem(RuleBucket, id, "PublicAccessBlockConfiguration must set BlockPublicAcls, BlockPublicPolicy, IgnorePublicAcls and RestrictPublicBuckets all true"))
		}
		if !encrypted(b) {
			ps = append(ps, problem(RuleBucket, id, "BucketEncryption has no default encryption rule; set ServerSideEncryptionByDefault.SSEAlgorithm (AES256 or aws:kms)"))
		}
		if !ownerEnforced(b) {
			ps = append(ps, problem(RuleBucket, id, "OwnershipControls must be BucketOwnerEnforced, so ACLs are off and the bucket owns every object"))
		}
		if b.AWSCloudFormationDeletionPolicy != policies.DeletionPolicy("Retain") || b.AWSCloudFormationUpdateReplacePolicy != policies.UpdateReplacePolicy("Retain") {
			ps = append(ps, problem(RuleBucket, id, "needs DeletionPolicy: Retain and UpdateReplacePolicy: Retain, so deleting or replacing the stack keeps the sources"))
		}
		if !deniesPlainHTTP(t, id) {
			ps = append(ps, problem(RuleBucket, id, "no %s denies requests without TLS; add one with a Deny statement for Principal \"*\", Action s3:*, Resource the bucket and its objects, Condition Bool aws:SecureTransport false", typeBucketPolicy))
		}
	}
	return ps
}

func encrypted(b *s3.Bucket) bool {
	if b.BucketEncryption == nil {
		return false
	}
	for _, r := range b.BucketEncryption.ServerSideEncryptionConfiguration {
		if d := r.ServerSideEncryptionByDefault; d != nil && d.SSEAlgorithm != "" {
			return true
		}
	}
	return false
}

func ownerEnforced(b *s3.Bucket) bool {
	if b.OwnershipControls == nil {
		return false
	}
	for _, r := range b.OwnershipControls.Rules {
		if firstString(r.ObjectOwnership) == "BucketOwnerEnforced" {
			return true
		}
	}
	return false
}

// deniesPlainHTTP reports whether a bucket policy on bucket denies every request, to the bucket and
// its objects, that did not come over TLS.
func deniesPlainHTTP(t *Template, bucket string) bool {
	for _, s := range statements(t) {
		if t.resourceType(s.resource) != typeBucketPolicy || dig(t.resource(s.resource), "Properties", "Bucket") != refString(bucket) {
			continue
		}
		if s.body["Effect"] != "Deny" || !everyone(s.body["Principal"]) || !slices.ContainsFunc(s.actions(), func(a string) bool { return a == "s3:*" || a == "*" }) {
			continue
		}
		secure := dig(s.body, "Condition", "Bool", "aws:SecureTransport")
		if secure != "false" && secure != false {
			continue
		}
		var onBucket, onObjects bool
		for _, res := range s.resources() {
			onBucket = onBucket || res == "${"+bucket+".Arn}"
			onObjects = onObjects || res == "${"+bucket+".Arn}/*"
		}
		if onBucket && onObjects {
			return true
		}
	}
	return false
}

// everyone reports whether an IAM Principal is every principal: "*" or {"AWS": "*"}.
func everyone(p any) bool {
	return p == "*" || slices.Contains(stringList(dig(p, "AWS")), "*")
}

func isTrue(b *bool) bool { return b != nil && *b }
