package metrics

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestNewest(t *testing.T) {
	t0 := time.Date(2026, 12, 7, 10, 0, 0, 0, time.UTC)
	east, west := map[string]string{DimRegion: "us-east-1"}, map[string]string{DimRegion: "us-west-2"}
	dispatched := map[string]string{DimRegion: "us-east-1", DimOutcome: "dispatched"}
	failed := map[string]string{DimRegion: "us-east-1", DimOutcome: "dispatch_failed"}
	tests := []struct {
		name   string
		points []Point
		want   []Latest
	}{
		{name: "nothing", points: nil, want: nil},
		{
			name: "a series' newest point wins, wherever it was read; its samples are all counted",
			points: []Point{
				{QueuedJobs, east, []float64{3}, t0.Add(2 * time.Second)},
				{QueuedJobs, east, []float64{5}, t0},
				{QueuedJobs, east, []float64{1}, t0.Add(time.Second)},
			},
			want: []Latest{{QueuedJobs, east, 3, t0.Add(2 * time.Second), 3, 9}},
		},
		{
			name: "of points at one millisecond, the one read last",
			points: []Point{
				{ActiveJobs, east, []float64{1}, t0},
				{ActiveJobs, east, []float64{2}, t0},
			},
			want: []Latest{{ActiveJobs, east, 2, t0, 2, 3}},
		},
		{
			name:   "of one point's several values, the last",
			points: []Point{{SubmitToRunning, west, []float64{40, 10, 25}, t0}},
			want:   []Latest{{SubmitToRunning, west, 25, t0, 3, 75}},
		},
		{
			name: "metrics in All's order, series by their dimensions' values",
			points: []Point{
				{APIRequests, map[string]string{DimRoute: "POST /api/v1/jobs", DimStatusClass: "2xx"}, []float64{1}, t0},
				{BeatDuration, map[string]string{}, []float64{35}, t0},
				{DispatchOutcomes, dispatched, []float64{1}, t0},
				{QueuedJobs, west, []float64{0}, t0},
				{DispatchOutcomes, failed, []float64{1}, t0.Add(time.Second)},
				{QueuedJobs, east, []float64{2}, t0},
				{APIRequests, map[string]string{DimRoute: "GET /api/v1/jobs", DimStatusClass: "2xx"}, []float64{1}, t0},
			},
			want: []Latest{
				{QueuedJobs, east, 2, t0, 1, 2},
				{QueuedJobs, west, 0, t0, 1, 0},
				{DispatchOutcomes, failed, 1, t0.Add(time.Second), 1, 1},
				{DispatchOutcomes, dispatched, 1, t0, 1, 1},
				{BeatDuration, map[string]string{}, 35, t0, 1, 35},
				{APIRequests, map[string]string{DimRoute: "GET /api/v1/jobs", DimStatusClass: "2xx"}, 1, t0, 1, 1},
				{APIRequests, map[string]string{DimRoute: "POST /api/v1/jobs", DimStatusClass: "2xx"}, 1, t0, 1, 1},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, Newest(tt.points)); diff != "" {
				t.Errorf("Newest(%d points) (-want +got):\n%s", len(tt.points), diff)
			}
		})
	}
}

// TestNewestOfWhatReadReads: the times Newest compares are the lines' own, as Read gives them.
func TestNewestOfWhatReadReads(t *testing.T) {
	now := at
	r, buf := recorder()
	r.now = func() time.Time { return now }
	if err := r.Put(ActiveJobs, []string{"us-east-1"}, 4); err != nil {
		t.Fatal(err)
	}
	now = at.Add(1500 * time.Millisecond)
	if err := r.Put(ActiveJobs, []string{"us-east-1"}, 1); err != nil {
		t.Fatal(err)
	}
	points, err := Read(buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	want := []Latest{{ActiveJobs, map[string]string{DimRegion: "us-east-1"}, 1, at.Add(1500 * time.Millisecond), 2, 5}}
	if diff := cmp.Diff(want, Newest(points)); diff != "" {
		t.Errorf("Newest(Read(two Puts)) (-want +got):\n%s", diff)
	}
}
