// Command validate reads rendered Kubernetes manifests (a multi-document YAML file) and decodes each object strictly
// into its type from k8s.io/api: an unknown field, a wrong type or an unexpected kind is an error. It checks what
// the API schema says about field names and types, not the API server's own validation of values.
package main

import (
	"bytes"
	"fmt"
	"os"
	"regexp"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	"sigs.k8s.io/yaml"
)

var kinds = map[string]func() any{
	"v1/ConfigMap":                       func() any { return &corev1.ConfigMap{} },
	"v1/Secret":                          func() any { return &corev1.Secret{} },
	"v1/Service":                         func() any { return &corev1.Service{} },
	"apps/v1/Deployment":                 func() any { return &appsv1.Deployment{} },
	"apps/v1/StatefulSet":                func() any { return &appsv1.StatefulSet{} },
	"batch/v1/Job":                       func() any { return &batchv1.Job{} },
	"policy/v1/PodDisruptionBudget":      func() any { return &policyv1.PodDisruptionBudget{} },
	"networking.k8s.io/v1/NetworkPolicy": func() any { return &networkingv1.NetworkPolicy{} },
}

var separator = regexp.MustCompile(`(?m)^---\s*$`)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: validate FILE...")
		os.Exit(2)
	}
	failed, checked := 0, 0
	for _, path := range os.Args[1:] {
		data, err := os.ReadFile(path)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		for i, doc := range separator.Split(string(data), -1) {
			if len(bytes.TrimSpace(stripComments([]byte(doc)))) == 0 {
				continue
			}
			var head struct {
				APIVersion string `json:"apiVersion"`
				Kind       string `json:"kind"`
			}
			if err := yaml.Unmarshal([]byte(doc), &head); err != nil {
				fmt.Printf("%s: document %d: %v\n", path, i, err)
				failed++
				continue
			}
			newObject, ok := kinds[head.APIVersion+"/"+head.Kind]
			if !ok {
				fmt.Printf("%s: document %d: %s %s is not a kind this check knows\n", path, i, head.APIVersion, head.Kind)
				failed++
				continue
			}
			if err := yaml.UnmarshalStrict([]byte(doc), newObject()); err != nil {
				fmt.Printf("%s: %s (document %d): %v\n", path, head.Kind, i, err)
				failed++
				continue
			}
			checked++
		}
	}
	fmt.Printf("%d objects valid, %d not\n", checked, failed)
	if failed > 0 || checked == 0 {
		os.Exit(1)
	}
}

func stripComments(doc []byte) []byte {
	var out [][]byte
	for _, line := range bytes.Split(doc, []byte("\n")) {
		if !bytes.HasPrefix(bytes.TrimSpace(line), []byte("#")) {
			out = append(out, line)
		}
	}
	return bytes.Join(out, []byte("\n"))
}
