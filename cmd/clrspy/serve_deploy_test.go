package main

import (
	"os"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// TestKubernetesSidecar: the example in deploy/ is valid YAML whose clrspy
// arguments serve accepts, and the application's DOTNET_DiagnosticPorts
// names the socket clrspy listens on, on a volume both containers mount.
func TestKubernetesSidecar(t *testing.T) {
	b, err := os.ReadFile("../../deploy/kubernetes-sidecar.yaml")
	if err != nil {
		t.Fatal(err)
	}
	type container struct {
		Name string   `yaml:"name"`
		Args []string `yaml:"args"`
		Env  []struct {
			Name  string `yaml:"name"`
			Value string `yaml:"value"`
		} `yaml:"env"`
		VolumeMounts []struct {
			Name      string `yaml:"name"`
			MountPath string `yaml:"mountPath"`
		} `yaml:"volumeMounts"`
	}
	var d struct {
		Spec struct {
			Template struct {
				Spec struct {
					InitContainers []container `yaml:"initContainers"`
					Containers     []container `yaml:"containers"`
				} `yaml:"spec"`
			} `yaml:"template"`
		} `yaml:"spec"`
	}
	if err := yaml.Unmarshal(b, &d); err != nil {
		t.Fatal(err)
	}
	spec := d.Spec.Template.Spec
	if len(spec.InitContainers) != 1 || len(spec.Containers) != 1 {
		t.Fatalf("want the clrspy sidecar and one application container: %+v", spec)
	}
	side, app := spec.InitContainers[0], spec.Containers[0]
	if len(side.Args) == 0 || side.Args[0] != "serve" {
		t.Fatalf("sidecar args %v", side.Args)
	}
	cmd := newServeCmd()
	if err := cmd.ParseFlags(side.Args[1:]); err != nil {
		t.Fatalf("clrspy serve %v: %v", side.Args[1:], err)
	}
	port, _ := cmd.Flags().GetString("diagnostic-port")
	var env string
	for _, e := range app.Env {
		if e.Name == "DOTNET_DiagnosticPorts" {
			env = e.Value
		}
	}
	if port == "" || env != port {
		t.Errorf("clrspy listens on %q, the application connects to %q", port, env)
	}
	mounted := func(c container) string {
		for _, m := range c.VolumeMounts {
			if strings.HasPrefix(port, strings.TrimSuffix(m.MountPath, "/")+"/") {
				return m.Name
			}
		}
		return ""
	}
	if v := mounted(side); v == "" || v != mounted(app) {
		t.Errorf("the socket's directory is not on a volume both containers mount (%q, %q)", v, mounted(app))
	}
}
