package spotprices

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"reflect"
	"strings"
	"time"
)

// Handler serves the book: the EC2 Query API at POST / (what an ec2.Client with this server as
// its BaseEndpoint calls) and a small JSON admin API at /prices for setting prices by hand.
// Neither checks who is asking; serve it on loopback only.
func (b *Book) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /{$}", b.serveEC2)
	mux.HandleFunc("GET /prices", b.listPrices)
	mux.HandleFunc("PUT /prices", b.putPrice)
	return mux
}

// priceRequest is the body of PUT /prices; the price takes effect now.
type priceRequest struct {
	Region       string  `json:"region"`
	InstanceType string  `json:"instance_type"`
	Price        float64 `json:"price"`
}

// The admin API's error codes, as Tidegate's API spells them: a bad request's detail names the
// field at fault.
const (
	codeInvalidRequest = "invalid_request"
	codeInternal       = "internal"
)

// adminError is the body of every admin API error.
type adminError struct {
	Error  string `json:"error"`
	Detail string `json:"detail"`
}

// A price request is under a hundred bytes; 4 KiB is generous and bounds a broken client.
const maxPriceRequestBytes = 4 << 10

// listPrices answers GET /prices with every price in the book, in the book file's form.
func (b *Book) listPrices(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, bookFile{Prices: b.Prices()})
}

// putPrice answers PUT /prices: it sets one price, as of now, in every zone of its region.
func (b *Book) putPrice(w http.ResponseWriter, r *http.Request) {
	req, err := decodePriceRequest(http.MaxBytesReader(w, r.Body, maxPriceRequestBytes))
	if err != nil {
		writeJSON(w, http.StatusBadRequest, adminError{codeInvalidRequest, err.Error()})
		return
	}
	err = b.Set(req.Region, req.InstanceType, req.Price, time.Now())
	if fe := (*FieldError)(nil); errors.As(err, &fe) {
		writeJSON(w, http.StatusBadRequest, adminError{codeInvalidRequest, fe.Error()})
		return
	}
	if err != nil {
		// Only a book kept in a file fails here, on writing it. The caller sees a request id,
		// the log line with the same id has the cause.
		id := requestID()
		slog.Error("setting spot price", "request_id", id, "err", err)
		w.Header().Set("X-Request-Id", id)
		writeJSON(w, http.StatusInternalServerError, adminError{codeInternal, "request " + id})
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// decodePriceRequest reads one JSON price request. Its errors name the field where the JSON
// decoder knows it: an unknown field, or a price that is a string or too large for a float64.
// JSON has no NaN or Infinity, so those arrive as a syntax error, which names only the offset.
func decodePriceRequest(body io.Reader) (priceRequest, error) {
	var req priceRequest
	dec := json.NewDecoder(body)
	dec.DisallowUnknownFields()
	err := dec.Decode(&req)
	var syntax *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syntax):
		return req, fmt.Errorf("body is not valid JSON at byte %d: %v (a price must be a finite JSON number)", syntax.Offset, err)
	case errors.As(err, &typ):
		want := "a string"
		if typ.Type.Kind() == reflect.Float64 {
			want = "a finite number"
		}
		return req, fmt.Errorf("%s must be %s, got %s", typ.Field, want, typ.Value)
	case errors.Is(err, io.EOF):
		return req, errors.New("body is empty; want {\"region\", \"instance_type\", \"price\"}")
	case err != nil:
		return req, fmt.Errorf("body has %s", strings.TrimPrefix(err.Error(), "json: "))
	}
	if dec.More() {
		return req, errors.New("body holds more than one JSON value")
	}
	return req, nil
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}
