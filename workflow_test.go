package thv

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"thv/internal/testenv"
)

var workflowFile = filepath.Join(".github", "workflows", "reproduce.yml")

// TestWorkflowLint runs actionlint (github.com/rhysd/actionlint, installed
// by .ci/run) on the researchers' workflow, .github/workflows/reproduce.yml
// (docs/ci.md): its expressions, contexts, shell scripts (shellcheck, when
// installed) and action inputs. In CI a missing actionlint fails.
func TestWorkflowLint(t *testing.T) {
	bin := testenv.LookGoTool(t, "actionlint", "github.com/rhysd/actionlint/cmd/actionlint@v1.7.12")
	out, err := exec.Command(bin, "-no-color", workflowFile).CombinedOutput()
	if err != nil {
		t.Fatalf("actionlint: %v\n%s", err, out)
	}
}

// signingSecrets are the secrets that let a run sign cache entries or
// write the cache: only reviewed code may see them.
var signingSecrets = regexp.MustCompile(`secrets\.(THV_SIGNING_KEY|AWS_ACCESS_KEY_ID|AWS_SECRET_ACCESS_KEY)\b`)

// signingEnvironment is the environment that holds them, restricted to
// protected branches and tags in the repository's settings (docs/ci.md).
const signingEnvironment = "thv-cache-signing"

// TestWorkflowSignsOnlyOnPush: no pull_request run can reach the signing
// key (or the cache's write credentials). The workflow has no
// pull_request_target trigger (which would hand a pull request's code the
// base's secrets); no workflow-level setting names a secret; and every job
// that names a signing secret runs only on push (its if is exactly
// github.event_name == 'push') and in the signing environment, whose
// branch rules GitHub enforces whatever the workflow file says. The jobs
// that run on pull requests name none of them.
func TestWorkflowSignsOnlyOnPush(t *testing.T) {
	data, err := os.ReadFile(workflowFile)
	if err != nil {
		t.Fatal(err)
	}
	var wf struct {
		On   map[string]any `yaml:"on"`
		Env  map[string]any `yaml:"env"`
		Jobs map[string]yaml.Node
	}
	if err := yaml.Unmarshal(data, &wf); err != nil {
		t.Fatal(err)
	}
	if _, ok := wf.On["pull_request_target"]; ok {
		t.Error("the workflow runs on pull_request_target: a pull request's code would run with the base's secrets")
	}
	if _, ok := wf.On["pull_request"]; !ok {
		t.Error("the workflow does not run on pull requests: this test would prove nothing")
	}
	for k, v := range wf.Env {
		if strings.Contains(yamlText(t, v), "secrets.") {
			t.Errorf("the workflow-level env %s names a secret: every job, pull requests' included, would see it", k)
		}
	}
	signing, pullRequest := 0, 0
	for name, node := range wf.Jobs {
		var job struct {
			If          string `yaml:"if"`
			Environment any    `yaml:"environment"`
		}
		if err := node.Decode(&job); err != nil {
			t.Fatal(err)
		}
		env, _ := job.Environment.(string)
		if m, ok := job.Environment.(map[string]any); ok {
			env, _ = m["name"].(string)
		}
		cond := strings.Join(strings.Fields(job.If), " ")
		text := yamlText(t, &node)
		if signingSecrets.MatchString(text) {
			signing++
			if cond != "github.event_name == 'push'" {
				t.Errorf("job %s names a signing secret and runs if %q: want exactly github.event_name == 'push'", name, job.If)
			}
			if env != signingEnvironment {
				t.Errorf("job %s names a signing secret outside the environment %s (it is in %q)", name, signingEnvironment, env)
			}
			continue
		}
		if cond != "github.event_name == 'push'" {
			pullRequest++
		}
	}
	if signing == 0 || pullRequest == 0 {
		t.Errorf("%d jobs sign and %d run on pull requests: want both", signing, pullRequest)
	}
}

func yamlText(t *testing.T, v any) string {
	t.Helper()
	b, err := yaml.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
