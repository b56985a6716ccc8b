package reconcilehandler

import (
	"testing"

	"github.com/tidegate/tidegate/shared/config"
)

func baseConfig(t *testing.T, extra map[string]string) config.Config {
	t.Helper()
	m := map[string]string{
		config.EnvJobsTable: "j", config.EnvEventsTable: "e", config.EnvControlTable: "c",
		config.EnvDispatchQueueURL: "http://q/d", config.EnvWebhookQueueURL: "http://q/w", config.EnvSourcesBucket: "b",
		config.EnvRegions: "us-east-1=east,us-west-2=west",
	}
	for k, v := range extra {
		m[k] = v
	}
	cfg, err := config.Parse(func(k string) string { return m[k] })
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

func TestClusters(t *testing.T) {
	aws := Clusters(baseConfig(t, nil))
	dev := Clusters(baseConfig(t, map[string]string{config.EnvKubeconfig: "/k"}))
	if len(aws) != 2 || len(aws[0].Regions) != 1 || len(dev) != 1 || len(dev[0].Regions) != 2 {
		t.Errorf("Clusters: AWS %+v, dev %+v; want two clusters of one region, and one of two", aws, dev)
	}
}
