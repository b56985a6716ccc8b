package spotprices

import (
	"crypto/rand"
	"encoding/xml"
	"fmt"
	"net/http"
	"strings"
)

// The EC2 error codes this endpoint answers, as EC2 spells them; the SDK hands them to the caller
// as smithy.APIError's ErrorCode.
const (
	codeMissingAction    = "MissingAction"
	codeInvalidAction    = "InvalidAction"
	codeMissingParameter = "MissingParameter"
	codeUnknownParameter = "UnknownParameter"
	codeInvalidValue     = "InvalidParameterValue"
	codeBadToken         = "InvalidPaginationToken"
	codeUnsupported      = "Unsupported"
	codeAuthFailure      = "AuthFailure"
	codeDryRun           = "DryRunOperation"
)

// statusOf is the HTTP status of each error code, as EC2 answers them.
var statusOf = map[string]int{
	codeMissingAction:    http.StatusBadRequest,
	codeInvalidAction:    http.StatusBadRequest,
	codeMissingParameter: http.StatusBadRequest,
	codeUnknownParameter: http.StatusBadRequest,
	codeInvalidValue:     http.StatusBadRequest,
	codeBadToken:         http.StatusBadRequest,
	codeUnsupported:      http.StatusBadRequest,
	codeAuthFailure:      http.StatusUnauthorized,
	codeDryRun:           http.StatusPreconditionFailed,
}

// Messages a caller reads, worded as EC2 words them where EC2 has the same fault.
const (
	msgInvalidAction = "The action %s is not valid for this web service; this endpoint answers only " + actionDescribePrice
	msgMissingAction = "The request must contain the parameter Action"
	msgNoVersion     = "The request must contain the parameter Version"
	msgNoScope       = "The Authorization header has no SigV4 credential scope (Credential=AKID/DATE/REGION/ec2/aws4_request); this endpoint takes the region from it"
	msgDryRun        = "Request would have succeeded, but DryRun flag is set."
)

// ec2Namespace is the XML namespace of EC2's API version 2016-11-15, the one the SDK speaks.
const ec2Namespace = "http://ec2.amazonaws.com/doc/2016-11-15/"

// ec2TimeLayout is how EC2 writes a timestamp: UTC, with milliseconds.
const ec2TimeLayout = "2006-01-02T15:04:05.000Z"

// A DescribeSpotPriceHistory request is a few hundred bytes; 64 KiB bounds what a broken client
// can make us buffer while leaving room for long filter lists.
const maxRequestBytes = 64 << 10

type apiError struct {
	Code    string
	Message string
}

type describeResponse struct {
	XMLName   xml.Name `xml:"DescribeSpotPriceHistoryResponse"`
	Namespace string   `xml:"xmlns,attr"`
	RequestID string   `xml:"requestId"`
	Set       struct {
		Items []xmlItem `xml:"item"`
	} `xml:"spotPriceHistorySet"`
	NextToken string `xml:"nextToken,omitempty"`
}

type xmlItem struct {
	AvailabilityZone   string `xml:"availabilityZone"`
	InstanceType       string `xml:"instanceType"`
	ProductDescription string `xml:"productDescription"`
	SpotPrice          string `xml:"spotPrice"`
	Timestamp          string `xml:"timestamp"`
}

type errorResponse struct {
	XMLName   xml.Name   `xml:"Response"`
	Errors    []apiError `xml:"Errors>Error"`
	RequestID string     `xml:"RequestID"`
}

// serveEC2 answers one EC2 Query request: it reads the request, lets parseQuery and answer
// decide, and writes what they decided.
func (b *Book) serveEC2(w http.ResponseWriter, r *http.Request) {
	id := requestID()
	r.Body = http.MaxBytesReader(w, r.Body, maxRequestBytes)
	if err := r.ParseForm(); err != nil {
		writeError(w, id, &apiError{codeInvalidValue, fmt.Sprintf("The request body is not a form: %v", err)})
		return
	}
	region, ok := scopeRegion(r.Header.Get("Authorization"))
	switch action := r.Form.Get(paramAction); {
	case action == "":
		writeError(w, id, &apiError{codeMissingAction, msgMissingAction})
		return
	case action != actionDescribePrice:
		writeError(w, id, &apiError{codeInvalidAction, fmt.Sprintf(msgInvalidAction, action)})
		return
	case r.Form.Get(paramVersion) == "":
		writeError(w, id, &apiError{codeMissingParameter, msgNoVersion})
		return
	case !ok:
		writeError(w, id, &apiError{codeAuthFailure, msgNoScope})
		return
	}
	q, aerr := parseQuery(region, r.Form)
	if aerr != nil {
		writeError(w, id, aerr)
		return
	}
	if q.dryRun {
		writeError(w, id, &apiError{codeDryRun, msgDryRun})
		return
	}
	page, next := answer(b.Prices(), q)
	resp := describeResponse{Namespace: ec2Namespace, RequestID: id, NextToken: next}
	resp.Set.Items = make([]xmlItem, len(page))
	for i, it := range page {
		resp.Set.Items[i] = xmlItem{it.Zone, it.InstanceType, it.Description, it.SpotPrice,
			it.Timestamp.UTC().Format(ec2TimeLayout)}
	}
	writeXML(w, id, http.StatusOK, resp)
}

// scopeRegion is the region of a SigV4 Authorization header's credential scope. The signature is
// not checked: this endpoint is for loopback, and the region is all it needs from the header.
func scopeRegion(auth string) (string, bool) {
	_, cred, ok := strings.Cut(auth, "Credential=")
	if !ok {
		return "", false
	}
	cred, _, _ = strings.Cut(cred, ",")
	parts := strings.Split(strings.TrimSpace(cred), "/")
	// AKID/DATE/REGION/SERVICE/aws4_request
	if len(parts) != 5 || parts[3] != "ec2" || parts[4] != "aws4_request" ||
		parts[2] == "" || !isRegionName(parts[2]) {
		return "", false
	}
	return parts[2], true
}

func writeError(w http.ResponseWriter, id string, e *apiError) {
	status, ok := statusOf[e.Code]
	if !ok {
		status = http.StatusInternalServerError // a code missing from statusOf is this file's bug
	}
	writeXML(w, id, status, errorResponse{Errors: []apiError{*e}, RequestID: id})
}

func writeXML(w http.ResponseWriter, id string, status int, v any) {
	out, err := xml.Marshal(v)
	if err != nil {
		// Only a type with no XML form fails to marshal, and every type here has one.
		panic(fmt.Sprintf("spotprices: encoding %T: %v", v, err))
	}
	w.Header().Set("Content-Type", "text/xml;charset=UTF-8")
	w.Header().Set("X-Amzn-Requestid", id)
	w.WriteHeader(status)
	w.Write([]byte(xml.Header))
	w.Write(out)
}

// requestID is a fresh id in the UUID form EC2's request ids have.
func requestID() string {
	b := make([]byte, 16)
	rand.Read(b) // never fails; see crypto/rand.Read
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:])
}
