// Package awscalls counts the AWS SDK calls made through a config it instruments, by function,
// service and operation, the DynamoDB capacity they consumed (a transaction's write units worked
// out from its items, which DynamoDB Local answers wrongly), and the items each DynamoDB query
// read by the partition it read: middleware on the SDK's own
// stack (aws.Config.APIOptions), so every client made from the config is counted, each attempt
// once, as AWS bills it. It also times the functions' invocations. Benchmarks use it; no function
// links it.
package awscalls

import (
	"context"
	"reflect"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsmiddleware "github.com/aws/aws-sdk-go-v2/aws/middleware"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go/middleware"
)

// Middleware ids on the SDK's stack.
const (
	askCapacityID = "tidegate.awscalls.askCapacity"
	transactID    = "tidegate.awscalls.transactUnits"
	countID       = "tidegate.awscalls.count"
	itemsID       = "tidegate.awscalls.items"
)

// Outside names the calls made outside any invocation Invoke started: in `tidegate dev`, the
// queue pollers that stand in for Lambda's event source mappings.
const Outside = "outside"

// Key is what calls are counted by.
type Key struct {
	Function  string // the function whose invocation made the call, or Outside
	Service   string // the SDK's service id: "DynamoDB", "SQS", …
	Operation string // "TransactWriteItems", "SendMessage", …
}

// Tally is what the calls of one Key came to.
type Tally struct {
	// Calls counts attempts: a call the SDK retried counts each time it went out.
	Calls  int
	Errors int
	// ReadUnits and WriteUnits are the DynamoDB capacity units the calls consumed, as DynamoDB
	// answered them (ReturnConsumedCapacity TOTAL, which the counter asks for on every call).
	ReadUnits, WriteUnits float64
}

// Invocations are one function's invocations: how many, and each one's duration.
type Invocations struct {
	Count     int
	Durations []time.Duration
}

// Counter counts calls and invocations; the zero Counter is ready.
type Counter struct {
	mu          sync.Mutex
	calls       map[Key]Tally
	invocations map[string]*Invocations
	items       map[string]int
}

// Instrument adds the counter's middleware to cfg, so every client made from it is counted.
func (c *Counter) Instrument(cfg *aws.Config) {
	cfg.APIOptions = append(cfg.APIOptions, c.addMiddleware)
}

// APIOption is the counter's middleware as one of a client's APIOptions, for a client made
// from options rather than from a config Instrument saw.
func (c *Counter) APIOption() func(*middleware.Stack) error { return c.addMiddleware }

func (c *Counter) addMiddleware(stack *middleware.Stack) error {
	if err := stack.Initialize.Add(middleware.InitializeMiddlewareFunc(itemsID, c.countItems), middleware.After); err != nil {
		return err
	}
	// Asked before serialization, on a copy of the caller's input, which is left as it was.
	if err := stack.Initialize.Add(middleware.InitializeMiddlewareFunc(askCapacityID, askCapacity), middleware.After); err != nil {
		return err
	}
	if err := stack.Initialize.Add(middleware.InitializeMiddlewareFunc(transactID, transactUnits), middleware.After); err != nil {
		return err
	}
	// Last in Finalize, after the retry middleware: once per attempt, with the attempt's result.
	return stack.Finalize.Add(middleware.FinalizeMiddlewareFunc(countID, c.count), middleware.After)
}

type functionKey struct{}

// Invoke marks ctx as an invocation of function, whose calls are counted under its name, and
// answers done, which records the invocation and how long it took.
func (c *Counter) Invoke(ctx context.Context, function string) (context.Context, func()) {
	start := time.Now()
	return context.WithValue(ctx, functionKey{}, function), func() {
		took := time.Since(start)
		c.mu.Lock()
		defer c.mu.Unlock()
		if c.invocations == nil {
			c.invocations = map[string]*Invocations{}
		}
		inv := c.invocations[function]
		if inv == nil {
			inv = &Invocations{}
			c.invocations[function] = inv
		}
		inv.Count++
		inv.Durations = append(inv.Durations, took)
	}
}

func functionOf(ctx context.Context) string {
	if f, ok := ctx.Value(functionKey{}).(string); ok {
		return f
	}
	return Outside
}

func (c *Counter) count(ctx context.Context, in middleware.FinalizeInput, next middleware.FinalizeHandler) (middleware.FinalizeOutput, middleware.Metadata, error) {
	out, md, err := next.HandleFinalize(ctx, in)
	k := Key{Function: functionOf(ctx), Service: awsmiddleware.GetServiceID(ctx), Operation: awsmiddleware.GetOperationName(ctx)}
	read, write := consumed(k.Operation, out.Result)
	if units, ok := middleware.GetStackValue(ctx, transactUnitsKey{}).(float64); ok && err == nil {
		write = max(write, units)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.calls == nil {
		c.calls = map[Key]Tally{}
	}
	t := c.calls[k]
	t.Calls++
	if err != nil {
		t.Errors++
	}
	t.ReadUnits += read
	t.WriteUnits += write
	c.calls[k] = t
	return out, md, err
}

// Reset forgets everything counted so far.
func (c *Counter) Reset() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.calls, c.invocations, c.items = nil, nil, nil
}

// countItems adds the items a DynamoDB Query read (its ScannedCount: what it was charged for,
// before any filter) to the partition it read, the value of its key condition's ":pk".
func (c *Counter) countItems(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
	out, md, err := next.HandleInitialize(ctx, in)
	q, ok := in.Parameters.(*dynamodb.QueryInput)
	res, done := out.Result.(*dynamodb.QueryOutput)
	if !ok || !done || err != nil {
		return out, md, err
	}
	pk, ok := q.ExpressionAttributeValues[":pk"].(*types.AttributeValueMemberS)
	if !ok {
		return out, md, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.items == nil {
		c.items = map[string]int{}
	}
	c.items[pk.Value] += int(res.ScannedCount)
	return out, md, err
}

// Items is how many items the queries so far read, by the partition read (their ":pk").
func (c *Counter) Items() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make(map[string]int, len(c.items))
	for k, n := range c.items {
		out[k] = n
	}
	return out
}

// Calls is a copy of the tallies so far.
func (c *Counter) Calls() map[Key]Tally {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make(map[Key]Tally, len(c.calls))
	for k, t := range c.calls {
		out[k] = t
	}
	return out
}

// Invocations is a copy of the invocations so far, by function.
func (c *Counter) Invocations() map[string]Invocations {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make(map[string]Invocations, len(c.invocations))
	for f, inv := range c.invocations {
		out[f] = Invocations{Count: inv.Count, Durations: slices.Clone(inv.Durations)}
	}
	return out
}

// askCapacity sets ReturnConsumedCapacity TOTAL on a copy of a DynamoDB input that leaves it
// unset. Every operation that consumes capacity has the field, under that name.
func askCapacity(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
	v := reflect.ValueOf(in.Parameters)
	if awsmiddleware.GetServiceID(ctx) == "DynamoDB" && v.Kind() == reflect.Pointer && !v.IsNil() && v.Elem().Kind() == reflect.Struct {
		f := v.Elem().FieldByName("ReturnConsumedCapacity")
		if f.IsValid() && f.Kind() == reflect.String && f.String() == "" {
			cp := reflect.New(v.Elem().Type())
			cp.Elem().Set(v.Elem())
			cp.Elem().FieldByName("ReturnConsumedCapacity").SetString(string(types.ReturnConsumedCapacityTotal))
			in.Parameters = cp.Interface()
		}
	}
	return next.HandleInitialize(ctx, in)
}

// transactUnitsKey carries a TransactWriteItems' write units, worked out from its input, from
// Initialize to the count in Finalize.
type transactUnitsKey struct{}

// transactUnits works out what a TransactWriteItems costs in DynamoDB (TransactWriteUnits):
// DynamoDB Local answers the same 2 or 4 units for a transaction of one item or a hundred.
func transactUnits(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
	if t, ok := in.Parameters.(*dynamodb.TransactWriteItemsInput); ok && t != nil {
		ctx = middleware.WithStackValue(ctx, transactUnitsKey{}, TransactWriteUnits(t.TransactItems))
	}
	return next.HandleInitialize(ctx, in)
}

// TransactWriteUnits is what DynamoDB on demand bills a transaction of items in write units: two
// for each KB, rounded up, of each item it writes, as transactions cost twice a plain write. A put's
// item is in the request; an update's, a delete's or a condition check's is not, so each of those
// counts as an item of 1 KB or less: for larger items this is a floor. Index writes are not counted.
func TransactWriteUnits(items []types.TransactWriteItem) float64 {
	units := 0.0
	for _, it := range items {
		size := 0
		if it.Put != nil {
			size = itemBytes(it.Put.Item)
		}
		units += 2 * float64(max(1, (size+1023)/1024))
	}
	return units
}

// itemBytes is an item's size as DynamoDB counts it: each attribute's name and value.
func itemBytes(item map[string]types.AttributeValue) int {
	n := 0
	for name, v := range item {
		n += len(name) + valueBytes(v)
	}
	return n
}

// valueBytes is an attribute value's size as DynamoDB counts it: a string's or binary's length, a
// number's digits two to a byte plus one, one byte for a boolean or null, and for a list or map
// three bytes and its elements (with a byte each, and a map's names).
func valueBytes(v types.AttributeValue) int {
	number := func(s string) int { return (len(s)+1)/2 + 1 }
	n := 0
	switch v := v.(type) {
	case *types.AttributeValueMemberS:
		n = len(v.Value)
	case *types.AttributeValueMemberN:
		n = number(v.Value)
	case *types.AttributeValueMemberB:
		n = len(v.Value)
	case *types.AttributeValueMemberBOOL, *types.AttributeValueMemberNULL:
		n = 1
	case *types.AttributeValueMemberSS:
		for _, e := range v.Value {
			n += len(e)
		}
	case *types.AttributeValueMemberNS:
		for _, e := range v.Value {
			n += number(e)
		}
	case *types.AttributeValueMemberBS:
		for _, e := range v.Value {
			n += len(e)
		}
	case *types.AttributeValueMemberL:
		n = 3
		for _, e := range v.Value {
			n += 1 + valueBytes(e)
		}
	case *types.AttributeValueMemberM:
		n = 3
		for k, e := range v.Value {
			n += len(k) + 1 + valueBytes(e)
		}
	}
	return n
}

// consumed sums the capacity a DynamoDB output reports, split into read and write units. An
// answer that gives only CapacityUnits is a read or a write by its operation.
func consumed(op string, result any) (read, write float64) {
	v := reflect.ValueOf(result)
	if v.Kind() != reflect.Pointer || v.IsNil() || v.Elem().Kind() != reflect.Struct {
		return 0, 0
	}
	f := v.Elem().FieldByName("ConsumedCapacity")
	if !f.IsValid() {
		return 0, 0
	}
	var all []types.ConsumedCapacity
	switch cc := f.Interface().(type) {
	case *types.ConsumedCapacity:
		if cc != nil {
			all = append(all, *cc)
		}
	case []types.ConsumedCapacity:
		all = cc
	}
	reads := isRead(op)
	for _, cc := range all {
		r, w := aws.ToFloat64(cc.ReadCapacityUnits), aws.ToFloat64(cc.WriteCapacityUnits)
		if r == 0 && w == 0 {
			if reads {
				r = aws.ToFloat64(cc.CapacityUnits)
			} else {
				w = aws.ToFloat64(cc.CapacityUnits)
			}
		}
		read += r
		write += w
	}
	return read, write
}

func isRead(op string) bool {
	return op == "Query" || op == "Scan" || strings.HasPrefix(op, "Get") || op == "BatchGetItem" || op == "TransactGetItems"
}
