package dynamo

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/tidegate/tidegate/shared/jobs"
	"github.com/tidegate/tidegate/shared/records"
)

// Apply makes change c to job j (its record before the change), with c's event in the same
// transaction, if the job is still in c.From (and held by c.Claim): records.ErrStale when it is
// not. A change the job's life does not allow (jobs.Change.Check) is refused before any write.
func (s *JobStore) Apply(ctx context.Context, j jobs.Job, c jobs.Change) error {
	_, err := s.apply(ctx, j, c, types.ReturnValueNone)
	return err
}

// apply writes c as Apply does and, for a change without an event (one UpdateItem), answers the
// item as ret asks.
func (s *JobStore) apply(ctx context.Context, j jobs.Job, c jobs.Change, ret types.ReturnValue) (map[string]types.AttributeValue, error) {
	if err := c.Check(); err != nil {
		return nil, fmt.Errorf("job %s: %w", j.ID, err)
	}
	u, err := updateOf(j, c, s.retention)
	if err != nil {
		return nil, fmt.Errorf("recording job %s %s → %s: %w", j.ID, c.From, c.To, err)
	}
	pk, sk := jobKey(j.ID)
	update := &types.Update{
		TableName: &s.tables.Jobs, Key: keyOf(pk, sk), UpdateExpression: &u.expr,
		ConditionExpression: &u.cond, ExpressionAttributeNames: u.names, ExpressionAttributeValues: u.vals,
	}
	if c.Event == nil {
		// No event to write with it: one conditional update, half a transaction's cost.
		out, err := s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
			TableName: update.TableName, Key: update.Key, UpdateExpression: update.UpdateExpression,
			ConditionExpression: update.ConditionExpression, ExpressionAttributeNames: update.ExpressionAttributeNames,
			ExpressionAttributeValues: update.ExpressionAttributeValues, ReturnValues: ret,
		})
		if conditionFailed(err) {
			return nil, records.ErrStale
		}
		if err != nil {
			return nil, fmt.Errorf("recording job %s %s → %s: %w", j.ID, c.From, c.To, err)
		}
		return out.Attributes, nil
	}
	ev, err := s.tables.eventPut(*c.Event)
	if err != nil {
		return nil, err
	}
	items := []types.TransactWriteItem{{Update: update}, ev}
	if j.Group() && c.Moves() && c.To.Terminal() && s.retention > 0 {
		items = append(items, s.arrayExpiry(j, c.At))
	}
	if c.FenceIn != "" {
		fence, err := s.fenceWrites(j, c)
		if err != nil {
			return nil, err
		}
		items = append(items, fence...)
	}
	_, err = s.db.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: items})
	if _, failed := isConditionFailed(err, 0); failed {
		return nil, records.ErrStale
	}
	if err != nil {
		return nil, fmt.Errorf("recording job %s %s → %s: %w", j.ID, c.From, c.To, err)
	}
	return nil, nil
}

// expression is one UpdateItem's expressions, built a clause at a time. Every attribute goes by a
// #name and every value by a :placeholder of its own, so no attribute name is a reserved word and
// no value overwrites another.
type expression struct {
	set, remove []string
	names       map[string]string
	vals        map[string]types.AttributeValue
	err         error
}

// value names v as placeholder, keeping the first encoding error.
func (e *expression) value(placeholder string, v any) string {
	av, err := attributevalue.Marshal(v)
	if err != nil && e.err == nil {
		e.err = fmt.Errorf("encoding %s: %w", strings.TrimPrefix(placeholder, ":"), err)
	}
	e.vals[placeholder] = av
	return placeholder
}

// name is attribute attr's #name.
func (e *expression) name(attr string) string {
	e.names["#"+attr] = attr
	return "#" + attr
}

func (e *expression) setTo(attr string, v any) {
	e.set = append(e.set, e.name(attr)+" = "+e.value(":set_"+attr, v))
}

func (e *expression) drop(attrs ...string) {
	for _, a := range attrs {
		e.remove = append(e.remove, e.name(a))
	}
}

// jobUpdate is a job change as DynamoDB's UpdateItem takes it.
type jobUpdate struct {
	expr, cond string
	names      map[string]string
	vals       map[string]types.AttributeValue
}

// updateOf turns change c of job j into its update: the status, the history entry and the job's
// place in gsi2 for a move, what the statuses imply (a job leaving dispatching drops its claim;
// one leaving the queue its pending reason and position), the fields c sets, and the condition
// that the job is still in c.From (and held by c.Claim). A move to a terminal status also sets
// expires_at, the table's TTL attribute, to the end plus retention (none when retention is 0).
func updateOf(j jobs.Job, c jobs.Change, retention time.Duration) (jobUpdate, error) {
	e := &expression{names: map[string]string{}, vals: map[string]types.AttributeValue{}}
	e.setTo("status", c.To)
	e.setTo("updated_at", c.At.UTC())
	if c.Moves() {
		e.move(j, c, retention)
	} else if c.To == jobs.StatusQueued && c.PendingReason != "" {
		// A new reason may move a queued job in or out of the jobs waiting apart (Held,
		// BackingOff, LongHeld).
		waiting := j
		waiting.PendingReason = c.PendingReason
		if pk, sk := queueKeys(waiting); pk != "" {
			e.setTo("gsi2pk", pk)
			e.setTo("gsi2sk", sk)
		}
	}
	e.fields(c)
	cond := e.name("status") + " = " + e.value(":from", c.From)
	if c.Claim != "" {
		cond += " AND " + e.name("claim") + "." + e.name("token") + " = " + e.value(":claim", c.Claim)
	}
	if c.WaitingOnly != "" {
		cond += " AND size(" + e.name("waiting_on") + ") = " + e.value(":one_wait", 1) + " AND contains(" + e.name("waiting_on") + ", " + e.value(":only_wait", c.WaitingOnly) + ")"
	}
	if c.Detailed {
		// Only once, and only while the end's details are due.
		cond += " AND attribute_exists(" + e.name("details_due") + ")"
	}
	if (c.From.Active() || c.From == jobs.StatusQueued) && j.Region != "" && c.Region == "" {
		// A change to a job queued or dispatched holds only while it is still in the region its
		// writer read (a claim only for a job of the claimant's region, not one queued again for
		// another), and to a job dispatched only for the attempt it read: an attempt fenced
		// (Displaced) reports nothing.
		cond += " AND " + e.name("region") + " = " + e.value(":was_region", j.Region)
	}
	if c.From.Active() && j.Region != "" {
		if j.Attempt > 1 {
			cond += " AND " + e.name("attempt") + " = " + e.value(":was_attempt", j.Attempt)
		} else if j.Attempt == 1 {
			cond += " AND (attribute_not_exists(" + e.name("attempt") + ") OR " + e.name("attempt") + " = " + e.value(":was_attempt", 1) + ")"
		}
	}
	if c.Region != "" {
		// Only a job still without a region, and only into one it allows.
		e.setTo("region", c.Region)
		cond += " AND " + e.name("region") + " = " + e.value(":roaming", "") + " AND contains(" + e.name("regions") + ", " + e.value(":region", c.Region) + ")"
	}
	if e.err != nil {
		return jobUpdate{}, e.err
	}
	expr := "SET " + strings.Join(e.set, ", ")
	if len(e.remove) > 0 {
		expr += " REMOVE " + strings.Join(e.remove, ", ")
	}
	return jobUpdate{expr: expr, cond: cond, names: e.names, vals: e.vals}, nil
}

// move sets what moving job j by change c writes: the history entry, the job's place in gsi2,
// what the statuses imply, and expires_at for a move to a terminal status.
func (e *expression) move(j jobs.Job, c jobs.Change, retention time.Duration) {
	e.set = append(e.set, e.name("status_history")+" = list_append("+e.name("status_history")+", "+
		e.value(":hist", []jobs.Transition{{Status: c.To, At: c.At.UTC(), Reason: c.Reason, Attempt: c.Attempt}})+")")
	moved := j
	moved.Status = c.To
	if c.From == jobs.StatusBlocked {
		moved.PendingReason = ""
		e.drop("pending_reason", "waiting_on")
	}
	switch {
	case c.To.Terminal() && c.Settled:
		e.drop("gsi5sk")
	case c.To.Terminal():
		// With gsi5sk, set when a job came to depend on this one, the release index (depends.go).
		e.setTo("gsi5pk", releaseDue)
	}
	if c.Region != "" {
		moved.Region = c.Region
	}
	if c.Unplace {
		moved.Region = ""
		e.setTo("region", "")
		e.drop("flavor")
	}
	if c.PendingReason != "" {
		moved.PendingReason = c.PendingReason
	}
	if qpk, qsk := queueKeys(moved); qpk != "" {
		e.setTo("gsi2pk", qpk)
		e.setTo("gsi2sk", qsk)
	} else {
		e.drop("gsi2pk", "gsi2sk")
	}
	if c.To == jobs.StatusPending {
		// When it was first applied, for reclaim's order: a job evicted and run again keeps its
		// first start, and is not the newest, first to go, at every eviction after.
		n := e.name("dispatched_at")
		e.set = append(e.set, n+" = if_not_exists("+n+", "+e.value(":set_dispatched_at", c.At.UTC())+")")
	}
	if c.From == jobs.StatusDispatching && c.NewClaim == nil {
		e.drop("claim")
	}
	if c.From == jobs.StatusQueued {
		e.drop("pending_reason", "pending_resource", "queue_position")
	}
	if c.To.Terminal() && retention > 0 {
		e.setTo(attrExpires, c.At.Add(retention).Unix())
	}
}

// fields sets the fields change c carries besides its move.
func (e *expression) fields(c jobs.Change) {
	if c.NewClaim != nil {
		e.setTo("claim", *c.NewClaim)
		if c.NewClaim.Flavor != "" {
			e.setTo("flavor", c.NewClaim.Flavor)
		}
	}
	if c.PendingReason != "" {
		e.setTo("pending_reason", c.PendingReason)
		if c.PendingResource != "" {
			e.setTo("pending_resource", c.PendingResource)
		} else {
			e.drop("pending_resource")
		}
	}
	if c.QueuePosition != 0 {
		e.setTo("queue_position", c.QueuePosition)
	}
	if c.SpotGate != nil {
		e.setTo("spot_gate", *c.SpotGate)
	}
	if c.Placement != nil {
		e.setTo("placement", c.Placement)
	}
	if c.LogTail != nil {
		e.setTo("log_tail", c.LogTail)
	}
	if c.Exits != nil {
		e.setTo("exits", c.Exits)
	}
	if c.Cost != nil {
		e.setTo("cost", *c.Cost)
	}
	if c.ClusterJobs != nil {
		e.setTo("cluster_jobs", c.ClusterJobs)
	}
	if r := c.Retried; r != nil {
		e.setTo("attempt", r.Attempt)
		e.setTo("spot_retries", r.SpotRetries)
		e.setTo("ready_timeouts", r.ReadyTimeouts)
		e.setTo("not_before", r.NotBefore.UTC())
		e.setTo("attempts", r.Attempts)
		if r.MemoryFactor > 1 {
			e.setTo("memory_factor", r.MemoryFactor)
		}
		if r.Preemptions > 0 {
			e.setTo("preemptions", r.Preemptions)
			e.drop("shield")
		}
	}
	if c.Shield != nil {
		e.setTo("shield", *c.Shield)
	}
	if c.PodsReady != nil {
		e.setTo("pods_ready", *c.PodsReady)
	}
	switch {
	case c.Detailed:
		e.drop("details_due")
	case c.DetailsDue:
		e.setTo("details_due", true)
	}
	if c.DispatchAttempts != 0 {
		e.setTo("dispatch_attempts", c.DispatchAttempts)
		e.setTo("dispatch_error", c.DispatchError)
	}
	if c.RegionChoice != nil {
		e.setTo("region_choice", *c.RegionChoice)
	}
}

// Claim takes a queued job of region for dispatch, or adopts one whose previous claim ran out
// (its dispatcher died mid-apply), and answers it with its manifests. records.ErrStale when
// another dispatcher holds it or it has moved on. The common case, a queued job, is one
// conditional update that answers the whole new record.
func (s *JobStore) Claim(ctx context.Context, id, region, token string, now, until time.Time) (jobs.Job, error) {
	return s.ClaimOn(ctx, id, region, "", token, now, until)
}

// ClaimOn is Claim for a job admitted on flavor of region, which the claim and the job keep. A
// claim adopted keeps the flavor the job was first claimed on, where its objects may be already.
func (s *JobStore) ClaimOn(ctx context.Context, id, region, flavor, token string, now, until time.Time) (jobs.Job, error) {
	claim := jobs.Claim{Token: token, Until: until.UTC(), Flavor: flavor}
	queued := jobs.Job{ID: id, Region: region, Status: jobs.StatusQueued}
	_, c, err := jobs.Move(queued, jobs.StatusDispatching, "", now)
	if err != nil {
		return jobs.Job{}, err
	}
	c.NewClaim = &claim
	item, err := s.apply(ctx, queued, c, types.ReturnValueAllNew)
	if err == nil {
		return decodeJob(item)
	}
	if !errors.Is(err, records.ErrStale) {
		return jobs.Job{}, err
	}
	// Not queued: perhaps a dead claim to adopt.
	j, err := s.Job(ctx, id)
	if err != nil {
		return j, err
	}
	if j.Status != jobs.StatusDispatching || j.Claim == nil || !j.Claim.Until.Before(now) {
		return j, records.ErrStale
	}
	claim.Flavor = j.Flavor
	adopted, c, err := jobs.Adopt(j, claim, now)
	if err != nil {
		return j, err
	}
	if err := s.Apply(ctx, j, c); err != nil {
		return j, err
	}
	return adopted, nil
}
