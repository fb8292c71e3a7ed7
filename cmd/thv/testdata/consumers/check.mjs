// An independent consumer of a thv bundle: node check.mjs BUNDLE_DIR
//
// (a) loads ro-crate-metadata.json with the ro-crate library and checks
//     that the root dataset, the workflow, the actions with their
//     instruments, every result file with its SHA-256 (recomputed from
//     the file) and the container image (or that there is none) are
//     found, as the Workflow Run / Provenance Run Crate profiles ask;
// (b) queries every Parquet artifact of the bundle's store with DuckDB
//     (read_parquet) and checks row counts against the lock's parameters.
//
// Prints one JSON line per Parquet object ({"path","rows","columns","first"})
// for the Go test to compare with thv's own reader, then "ok …".
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { ROCrate } from 'ro-crate';
import { DuckDBInstance } from '@duckdb/node-api';

const dir = process.argv[2];
if (!dir) {
  console.error('usage: node check.mjs BUNDLE_DIR');
  process.exit(2);
}

const sha256 = (p) => crypto.createHash('sha256').update(fs.readFileSync(path.join(dir, p))).digest('hex');
const ids = (v) => (v ?? []).map((e) => e['@id']);

// (a) The crate, through the ro-crate library.
const crate = new ROCrate(JSON.parse(fs.readFileSync(path.join(dir, 'ro-crate-metadata.json'), 'utf8')), { array: true, link: true });
const root = crate.rootDataset;
assert.equal(root['@id'], './', 'root dataset');
for (const profile of ['https://w3id.org/ro/wfrun/process/0.5', 'https://w3id.org/ro/wfrun/workflow/0.5', 'https://w3id.org/ro/wfrun/provenance/0.5']) {
  assert.ok(ids(root.conformsTo).includes(profile), `root conformsTo ${profile}`);
}
const workflow = root.mainEntity[0];
for (const t of ['File', 'SoftwareSourceCode', 'ComputationalWorkflow']) {
  assert.ok(crate.hasType(workflow, t), `mainEntity is a ${t}`);
}
assert.ok(fs.existsSync(path.join(dir, decodeURIComponent(workflow['@id']))), 'the workflow file is in the bundle');

const actions = [...crate.entities({ filter: (e) => crate.hasType(e, 'CreateAction') })];
assert.ok(actions.length >= 2, 'a CreateAction for the workflow and one per task kind');
const mentioned = ids(root.mentions);
const run = actions.find((a) => a.instrument?.[0]?.['@id'] === workflow['@id']);
assert.ok(run, 'a CreateAction whose instrument is the workflow');

// Every SHA-256 of the manifest, to compare the crate's digests with.
const manifest = new Map(fs.readFileSync(path.join(dir, 'SHA256SUMS'), 'utf8').trim().split('\n')
  .map((l) => { const [sum, p] = l.split('  '); return [p, sum]; }));

let results = 0;
const kinds = new Map();
for (const a of actions) {
  assert.ok(mentioned.includes(a['@id']), `${a['@id']} is mentioned by the root`);
  const tool = a.instrument?.[0];
  assert.ok(tool && crate.getEntity(tool['@id']), `${a['@id']}: its instrument ${tool?.['@id']} is an entity of the crate`);
  if (a !== run) {
    assert.ok(ids(workflow.hasPart).includes(tool['@id']), `the workflow has the tool ${tool['@id']} as a part`);
    kinds.set(a['@id'], a);
  }
  for (const r of a.result ?? []) {
    const e = crate.getEntity(r['@id']);
    assert.ok(e && crate.hasType(e, 'File'), `${a['@id']}: result ${r['@id']} is a File`);
    const p = decodeURIComponent(e['@id']);
    const sum = sha256(p);
    assert.equal(e.sha256?.[0], sum, `${p}: the crate's sha256 is the file's`);
    assert.equal(manifest.get(p), sum, `${p}: SHA256SUMS agrees`);
    assert.equal(Number(e.contentSize?.[0]), fs.statSync(path.join(dir, p)).size, `${p}: contentSize`);
    results++;
  }
}
assert.ok(results > 0, 'result files');
// Provenance Run Crate: a ControlAction per step, an OrganizeAction for the engine.
const controls = [...crate.entities({ filter: (e) => crate.hasType(e, 'ControlAction') })];
assert.equal(controls.length, kinds.size, 'one ControlAction per task kind');
const organize = [...crate.entities({ filter: (e) => crate.hasType(e, 'OrganizeAction') })];
assert.equal(organize.length, 1, 'one OrganizeAction');
assert.equal(organize[0].result[0]['@id'], run['@id'], 'the OrganizeAction results in the workflow run');

// The image, when the bundle has one: a ContainerImage with its digest,
// the containerImage of the workflow run, described by the archive File.
const image = crate.getEntity('#image');
if (image) {
  assert.ok(crate.hasType(image, 'ContainerImage'), '#image is a ContainerImage');
  assert.match(image.sha256?.[0] ?? '', /^[0-9a-f]{64}$/, 'the image digest');
  assert.equal(run.containerImage?.[0]?.['@id'], '#image', 'the run names its image');
  const archive = crate.getEntity('image/thv-oci.tar');
  assert.equal(archive.sha256[0], sha256('image/thv-oci.tar'), 'the image archive digest');
} else {
  assert.ok(!fs.existsSync(path.join(dir, 'image')), 'no image described, none present');
  assert.match(root.description[0], /no container image/, 'the root says there is no image');
}

// The lock: one JSON record per task line. Each kind's action lists one
// parameter value per task of its kind.
const lockName = decodeURIComponent(run.result[0]['@id']);
const records = fs.readFileSync(path.join(dir, lockName), 'utf8').split('\n')
  .filter((l) => l.startsWith('{"id"')).map((l) => JSON.parse(l.replace(/,$/, '')));
assert.ok(records.length > 0, 'lock records');
for (const a of kinds.values()) {
  const pvs = (a.object ?? []).filter((o) => crate.hasType(crate.getEntity(o['@id']), 'PropertyValue'));
  const kind = a['@id'].replace(/^#run\//, '');
  assert.equal(pvs.length, records.filter((r) => r.kind === kind).length, `${kind}: one parameter value per task`);
}

// (b) The Parquet artifacts, through DuckDB.
const parquet = [...crate.entities({ filter: (e) => crate.hasType(e, 'File') && e.encodingFormat?.[0] === 'application/vnd.apache.parquet' })];
assert.ok(parquet.length > 0, 'Parquet artifacts in the crate');
const db = await DuckDBInstance.create(':memory:');
const con = await db.connect();
const byDigest = new Map();
for (const r of records) {
  for (const [name, d] of Object.entries(r.outputs)) byDigest.set(d.replace('sha256:', ''), { rec: r, name });
}
let checked = 0;
for (const e of parquet) {
  const p = decodeURIComponent(e['@id']);
  const file = path.join(dir, p).replaceAll("'", "''");
  const count = Number((await (await con.run(`SELECT count(*) FROM read_parquet('${file}')`)).getRows())[0][0]);
  const first = await con.run(`SELECT * FROM read_parquet('${file}') LIMIT 1`);
  const columns = first.columnNames();
  const row = (await first.getRowObjectsJS())[0] ?? {};
  for (const k of Object.keys(row)) if (typeof row[k] === 'bigint') row[k] = Number(row[k]);
  // What the lock says the table must hold.
  const { rec, name } = byDigest.get(path.basename(p)) ?? {};
  assert.ok(rec, `${p}: an output of a task in the lock`);
  const params = JSON.parse(JSON.stringify(rec.params));
  if (rec.kind === 'run' && name === 'summary') assert.equal(count, 1, `${rec.id}: one summary row`);
  if (rec.kind === 'run' && name === 'trajectory') assert.equal(count, params.T, `${rec.id}: one trajectory row per round`);
  if (rec.kind === 'instance') assert.equal(count, params.n, `${rec.id}: one row per arm`);
  console.log(JSON.stringify({ path: p, rows: count, columns, first: row }));
  checked++;
}
console.log(`ok: ${actions.length} actions, ${results} result files with their digests, ${checked} Parquet artifacts read by DuckDB`);
