#!/usr/bin/env node
// SPDX-License-Identifier: Apache-2.0
// An OTLP/HTTP logs receiver for the tests, built on the OpenTelemetry
// project's own message types (@opentelemetry/otlp-transformer's generated
// protobufjs root, installed into build/npm by scripts/deps.sh): each POST
// body (JSON encoding) is read into an ExportLogsServiceRequest, checked
// (verify), encoded to the protobuf wire format and decoded back, and each
// log record's kwitness.session, kwitness.seq, severity and body is written
// as one JSON line to OUT. The first FAIL requests are answered 503 (to see
// the exporter retry).
// Usage: otlp_receiver.js NPM_DIR PORT_FILE OUT [FAIL]
'use strict';
const http = require('http');
const fs = require('fs');
const path = require('path');

const [npmDir, portFile, outFile, failArg] = process.argv.slice(2);
const root = require(path.join(npmDir, 'node_modules/@opentelemetry/otlp-transformer/build/src/generated/root.js'));
const Request = root.opentelemetry.proto.collector.logs.v1.ExportLogsServiceRequest;
let failLeft = Number(failArg || 0);
let requests = 0;

// A value of the JSON mapping: int64 as a string or a number.
function attrValue(v) {
  if (!v) return undefined;
  if (v.stringValue !== undefined && v.stringValue !== '') return v.stringValue;
  if (v.intValue !== undefined && v.intValue !== null) return String(v.intValue);
  return undefined;
}

function take(body) {
  const json = JSON.parse(body);
  const msg = Request.fromObject(json);
  const err = Request.verify(msg);
  if (err) throw new Error('verify: ' + err);
  // through the wire format and back: what a collector would store
  const back = Request.toObject(Request.decode(Request.encode(msg).finish()),
    { longs: String, defaults: false });
  const lines = [];
  for (const rl of back.resourceLogs || []) {
    const res = {};
    for (const a of (rl.resource && rl.resource.attributes) || []) res[a.key] = attrValue(a.value);
    for (const sl of rl.scopeLogs || []) {
      for (const r of sl.logRecords || []) {
        const attrs = {};
        for (const a of r.attributes || []) attrs[a.key] = attrValue(a.value);
        // what the exporter promises: fromObject takes anything, so say it
        if (!attrs['kwitness.session'] || !/^[0-9]+$/.test(attrs['kwitness.seq'] || '') ||
            !(r.body && r.body.stringValue) || ![9, 13].includes(r.severityNumber) ||
            !/^[0-9]+$/.test(String(r.timeUnixNano || ''))) {
          throw new Error('a log record without its session, seq, body, severity or time');
        }
        lines.push(JSON.stringify({
          service: res['service.name'], session: attrs['kwitness.session'],
          seq: attrs['kwitness.seq'], decision: attrs['kwitness.decision'],
          tool: attrs['kwitness.tool'], severity: r.severityNumber,
          time: r.timeUnixNano, body: r.body && r.body.stringValue,
        }));
      }
    }
  }
  if (!lines.length) throw new Error('no log records');
  fs.appendFileSync(outFile, lines.join('\n') + '\n');
}

const server = http.createServer((req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    requests++;
    if (req.method !== 'POST' || req.url !== '/v1/logs' ||
        !/^application\/json/.test(req.headers['content-type'] || '')) {
      fs.appendFileSync(outFile + '.errors', `${req.method} ${req.url} ${req.headers['content-type']}\n`);
      res.writeHead(400); res.end(); return;
    }
    if (failLeft > 0) { failLeft--; res.writeHead(503); res.end(); return; }
    try {
      take(Buffer.concat(chunks).toString('utf8'));
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end('{}');
    } catch (e) {
      fs.appendFileSync(outFile + '.errors', String(e) + '\n');
      res.writeHead(400); res.end();
    }
  });
});
server.listen(0, '127.0.0.1', () => fs.writeFileSync(portFile, String(server.address().port)));
process.on('SIGTERM', () => { fs.writeFileSync(outFile + '.requests', String(requests)); process.exit(0); });
