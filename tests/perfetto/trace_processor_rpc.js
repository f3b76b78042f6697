// Loads a trace into Perfetto's trace processor (the WebAssembly build the
// Perfetto UI ships, engine_bundle.js + trace_processor.wasm) under node,
// runs SQL queries on it and prints the results as one JSON line:
// {"results": [{"columns", "rows", "error"}...]}, or {"error"} when the
// trace could not be loaded.
//
//   node trace_processor_rpc.js UI_DIR TRACE SQL...
//
// The bundle is written for a web worker: it is given the little of one it
// uses (WorkerGlobalScope, self, location, a synchronous request for its
// .wasm file) and a message port. Requests and replies are
// TraceProcessorRpcStream protobuf bytes
// (perfetto/protos/perfetto/trace_processor/trace_processor.proto), encoded
// and decoded here; replies arrive while a request is handled.
'use strict';
const fs = require('fs');
const path = require('path');
const vm = require('vm');

const [uiDir, tracePath, ...queries] = process.argv.slice(2);
// TraceProcessorMethod
const APPEND_TRACE_DATA = 1, FINALIZE_TRACE_DATA = 2, QUERY_STREAMING = 3;
// TraceProcessorRpc fields
const RPC_SEQ = 1, RPC_REQUEST = 2, RPC_FATAL_ERROR = 5, RPC_APPEND_TRACE_DATA = 101,
      RPC_QUERY_ARGS = 103, RPC_APPEND_RESULT = 201, RPC_QUERY_RESULT = 203;
// QueryResult.CellsBatch.CellType
const CELL_NULL = 1, CELL_VARINT = 2, CELL_FLOAT64 = 3, CELL_STRING = 4;
const CHUNK = 1 << 20;

function varint(n)
{
    const out = [];
    let v = BigInt(n);
    do {
        const low = Number(v & 0x7fn);
        v >>= 7n;
        out.push(v ? low | 0x80 : low);
    } while (v);
    return out;
}

function tagged(num, type)
{
    return varint((num << 3) | type);
}

function lengthDelimited(num, bytes)
{
    return [...tagged(num, 2), ...varint(bytes.length), ...bytes ];
}

let seq = 0;
// One TraceProcessorRpc, as a TraceProcessorRpcStream's msg.
function request(method, args)
{
    const rpc = [
        ...tagged(RPC_SEQ, 0), ...varint(++seq), ...tagged(RPC_REQUEST, 0), ...varint(method),
        ...(args || [])
    ];
    return lengthDelimited(1, rpc);
}

// A varint at buf[pos]: [value as BigInt, position after it].
function readVarint(buf, pos)
{
    let v = 0n, shift = 0n, b;
    do {
        b = buf[pos++];
        v |= BigInt(b & 0x7f) << shift;
        shift += 7n;
    } while (b & 0x80);
    return [ v, pos ];
}

// A message as {field number: [values]}: varints as BigInt, the other wire
// types as their bytes.
function decode(buf)
{
    const out = {};
    let pos = 0;
    while (pos < buf.length) {
        let key, val, len;
        [key, pos] = readVarint(buf, pos);
        const type = Number(key & 7n);
        if (type === 0) {
            [val, pos] = readVarint(buf, pos);
        } else if (type === 2) {
            [len, pos] = readVarint(buf, pos);
            val = buf.subarray(pos, pos + Number(len));
            pos += Number(len);
        } else if (type === 1 || type === 5) {
            len = type === 1 ? 8 : 4;
            val = buf.subarray(pos, pos + len);
            pos += len;
        } else {
            throw new Error(`wire type ${type} in a reply`);
        }
        const num = Number(key >> 3n);
        (out[num] = out[num] || []).push(val);
    }
    return out;
}

// A repeated varint field, packed or not.
function varints(values)
{
    const out = [];
    for (const v of values || []) {
        if (typeof v === 'bigint') {
            out.push(v);
            continue;
        }
        for (let pos = 0, n; pos < v.length;) {
            [n, pos] = readVarint(v, pos);
            out.push(n);
        }
    }
    return out;
}

const text = (bytes) => Buffer.from(bytes).toString('utf8');

// The worker environment, in a context of its own: a module that sees
// node's `process` refuses to start.
const stderr = [];
const note = (...a) => stderr.push(a.join(' '));
const worker = vm.createContext({
    WorkerGlobalScope : function WorkerGlobalScope() {},
    location : {href : 'http://localhost/engine_bundle.js', protocol : 'http:', host : 'localhost'},
    console : {log : note, warn : note, error : note, info : note, debug : note},
    XMLHttpRequest : class {
        open(method, url) {
            this.url = String(url);
        } send() {
            const data = fs.readFileSync(path.join(uiDir, path.basename(this.url)));
            this.response = data.buffer.slice(data.byteOffset, data.byteOffset + data.length);
        }
    },
    setTimeout,
    clearTimeout,
    URL,
    TextDecoder,
    TextEncoder,
    performance,
});
worker.self = worker;
const WorkerBytes = vm.runInContext('Uint8Array', worker);

let replies = [];
const port = {
    onmessage : null,
    postMessage : (bytes) => replies.push(Buffer.from(bytes))
};
vm.runInContext(fs.readFileSync(path.join(uiDir, 'engine_bundle.js'), 'utf8'), worker);

function fail(why)
{
    process.stdout.write(JSON.stringify({error : why, stderr : stderr.slice(-20)}) + '\n');
    process.exit(1);
}

// The TraceProcessorRpc messages that answer one request.
function call(method, args)
{
    replies = [];
    port.onmessage({data : WorkerBytes.from(request(method, args))});
    const answers = (decode(Buffer.concat(replies))[1] || []).map(decode);
    for (const rpc of answers)
        if (rpc[RPC_FATAL_ERROR]) fail(`fatal error: ${text(rpc[RPC_FATAL_ERROR][0])}`);
    return answers;
}

function cellsOf(batch, cells)
{
    const ints = varints(batch[2]);
    const floats = [];
    for (const bytes of batch[3] || [])
        for (let i = 0; i + 8 <= bytes.length; i += 8)
            floats.push(Buffer.from(bytes.subarray(i, i + 8)).readDoubleLE(0));
    const strings = batch[5] ? text(batch[5][0]).split('\0') : [];
    for (const type of varints(batch[1])) {
        const t = Number(type);
        if (t === CELL_VARINT)
            cells.push(Number(BigInt.asIntN(64, ints.shift())));
        else if (t === CELL_FLOAT64)
            cells.push(floats.shift());
        else if (t === CELL_STRING)
            cells.push(strings.shift());
        else if (t === CELL_NULL)
            cells.push(null);
        else
            fail(`cell type ${t} in a query result (blobs are not asked for)`);
    }
}

function query(sql)
{
    const result = {columns : [], rows : [], error : ''};
    const cells = [];
    const args = lengthDelimited(RPC_QUERY_ARGS, lengthDelimited(1, [...Buffer.from(sql) ]));
    for (const rpc of call(QUERY_STREAMING, args)) {
        for (const qr of (rpc[RPC_QUERY_RESULT] || []).map(decode)) {
            if (qr[1] && !result.columns.length) result.columns = qr[1].map(text);
            if (qr[2]) result.error += text(qr[2][0]);
            for (const batch of (qr[3] || []).map(decode))
                cellsOf(batch, cells);
        }
    }
    const n = result.columns.length;
    for (let i = 0; n && i < cells.length; i += n)
        result.rows.push(cells.slice(i, i + n));
    return result;
}

// The module finishes starting in the microtasks after it is made.
setTimeout(() => {
    worker.onmessage({data : port});
    const trace = fs.readFileSync(tracePath);
    for (let off = 0; off < trace.length; off += CHUNK) {
        const chunk = lengthDelimited(RPC_APPEND_TRACE_DATA, trace.subarray(off, off + CHUNK));
        for (const rpc of call(APPEND_TRACE_DATA, chunk)) {
            const result = rpc[RPC_APPEND_RESULT] ? decode(rpc[RPC_APPEND_RESULT][0]) : {};
            if (result[2]) fail(`appending the trace: ${text(result[2][0])}`);
        }
    }
    call(FINALIZE_TRACE_DATA);
    process.stdout.write(JSON.stringify({results : queries.map(query)}) + '\n');
}, 0);
