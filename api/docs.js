
// Renders the service's OpenAPI document: overview, authentication, then the operations by
// tag, then the reusable schemas. No framework and no external resource: the page's
// Content-Security-Policy allows this script and its style only. Text is always inserted as
// text (never as HTML).
(function () {
  'use strict';

  var METHODS = ['get', 'put', 'post', 'patch', 'delete', 'options', 'head', 'trace'];
  var MAX_DEPTH = 8;
  var doc = null;

  // ---- DOM helpers -------------------------------------------------------------------------

  function el(tag, className, children) {
    var node = document.createElement(tag);
    if (className) node.className = className;
    append(node, children);
    return node;
  }

  function append(node, children) {
    if (children === undefined || children === null) return node;
    if (!Array.isArray(children)) children = [children];
    children.forEach(function (child) {
      if (child === undefined || child === null || child === false) return;
      node.appendChild(typeof child === 'string' ? document.createTextNode(child) : child);
    });
    return node;
  }

  function code(text) { return el('code', null, String(text)); }

  // lazyDetails is a <details> whose body is built when it is first opened: the collapsed
  // error responses and nested schemas of every operation would otherwise make a huge page.
  function lazyDetails(className, summary, build, open) {
    var details = el('details', className, summary);
    var built = false;
    function fill() {
      if (built) return;
      built = true;
      append(details, build());
    }
    if (open) {
      fill();
      details.open = true;
    } else {
      details.addEventListener('toggle', fill);
    }
    return details;
  }

  function table(headers, rows) {
    var head = el('tr', null, headers.map(function (h) { return el('th', null, h); }));
    var body = rows.map(function (cells) {
      return el('tr', null, cells.map(function (c) { return c && c.nodeName && c.nodeName.toUpperCase() === 'TD' ? c : el('td', null, c); }));
    });
    return el('div', 'table-wrap', el('table', null, [el('thead', null, head), el('tbody', null, body)]));
  }

  // ---- A small Markdown subset: headings, paragraphs, lists, tables, fenced code, `code`, **bold**.

  function inline(text) {
    var frag = document.createDocumentFragment();
    text.split(/(`[^`]+`)/).forEach(function (part) {
      if (/^`[^`]+`$/.test(part)) { frag.appendChild(code(part.slice(1, -1))); return; }
      part.split(/(\*\*[^*]+\*\*)/).forEach(function (p) {
        if (/^\*\*[^*]+\*\*$/.test(p)) frag.appendChild(el('strong', null, p.slice(2, -2)));
        else if (p) frag.appendChild(document.createTextNode(p));
      });
    });
    return frag;
  }

  function tableCells(line) {
    return line.trim().replace(/^\|/, '').replace(/\|$/, '').split('|').map(function (c) { return c.trim(); });
  }

  function markdown(text) {
    var root = el('div', 'md');
    if (!text) return root;
    var lines = String(text).replace(/\r\n/g, '\n').split('\n');
    var i = 0;
    while (i < lines.length) {
      var line = lines[i];
      if (/^\s*$/.test(line)) { i++; continue; }
      if (/^```/.test(line)) {
        var buf = [];
        for (i++; i < lines.length && !/^```/.test(lines[i]); i++) buf.push(lines[i]);
        i++;
        root.appendChild(el('pre', null, code(buf.join('\n'))));
        continue;
      }
      var heading = /^(#{1,4})\s+(.*)$/.exec(line);
      if (heading) {
        root.appendChild(append(el('h' + Math.min(heading[1].length + 1, 4)), inline(heading[2])));
        i++;
        continue;
      }
      if (/^\s*\|/.test(line)) {
        var rows = [];
        for (; i < lines.length && /^\s*\|/.test(lines[i]); i++) {
          if (!/^\s*\|[\s|:-]+\|\s*$/.test(lines[i])) rows.push(tableCells(lines[i]));
        }
        var head = rows.shift() || [];
        root.appendChild(table(head.map(inline), rows.map(function (r) { return r.map(inline); })));
        continue;
      }
      if (/^\s*[-*]\s+/.test(line)) {
        var items = [];
        for (; i < lines.length; i++) {
          var item = /^\s*[-*]\s+(.*)$/.exec(lines[i]);
          if (item) { items.push([item[1]]); continue; }
          if (/^\s+\S/.test(lines[i])) { items[items.length - 1].push(lines[i].trim()); continue; }
          break;
        }
        root.appendChild(el('ul', null, items.map(function (parts) { return append(el('li'), inline(parts.join(' '))); })));
        continue;
      }
      var para = [];
      for (; i < lines.length && !/^\s*$/.test(lines[i]) && !/^(```|#{1,4}\s|\s*\||\s*[-*]\s+)/.test(lines[i]); i++) para.push(lines[i].trim());
      root.appendChild(append(el('p'), inline(para.join(' '))));
    }
    return root;
  }

  // ---- References and schemas --------------------------------------------------------------

  function pointer(ref) {
    if (typeof ref !== 'string' || ref.indexOf('#/') !== 0) return undefined;
    return ref.slice(2).split('/').reduce(function (node, token) {
      return node === undefined ? undefined : node[token.replace(/~1/g, '/').replace(/~0/g, '~')];
    }, doc);
  }

  function refName(ref) { return ref.split('/').pop(); }

  // deref follows a $ref (and chains of them); the keywords written next to a $ref (OpenAPI
  // 3.1) override the target's.
  function deref(obj) {
    var seen = 0;
    var name = null;
    while (obj && typeof obj === 'object' && typeof obj.$ref === 'string' && seen++ < 20) {
      var target = pointer(obj.$ref);
      if (!name) name = refName(obj.$ref);
      if (target === undefined) break;
      var merged = Object.assign({}, target);
      Object.keys(obj).forEach(function (k) { if (k !== '$ref') merged[k] = obj[k]; });
      obj = merged;
    }
    return { value: obj || {}, name: name };
  }

  // flatten merges allOf into one schema: properties merged deeply, required lists joined; the
  // schema's own description wins over those of its parts.
  function flatten(schema, depth) {
    var s = deref(schema).value;
    if (!Array.isArray(s.allOf) || depth > MAX_DEPTH) return s;
    var out = {};
    [Object.assign({}, s, { allOf: undefined })].concat(s.allOf).forEach(function (part) {
      mergeInto(out, flatten(part, depth + 1));
    });
    delete out.allOf;
    return out;
  }

  // annotationOnly: a placeholder such as the envelope's `data`, which a part then describes.
  function annotationOnly(s) {
    return Object.keys(s).every(function (k) { return k === 'description' || k === 'title'; });
  }

  function mergeInto(out, s) {
    Object.keys(s).forEach(function (k) {
      var v = s[k];
      if (v === undefined) return;
      if (k === 'properties') {
        out.properties = Object.assign({}, out.properties || {});
        Object.keys(v).forEach(function (p) {
          var had = out.properties[p];
          out.properties[p] = had && !annotationOnly(had) ? { allOf: [had, v[p]] } : v[p];
        });
      } else if (k === 'required') {
        out.required = (out.required || []).concat(v.filter(function (r) { return (out.required || []).indexOf(r) < 0; }));
      } else if (k === 'not') {
        out.nots = (out.nots || []).concat([v]);
      } else if (k === 'items' && out.items) {
        out.items = { allOf: [out.items, v] };
      } else if (k === 'description' && out.description) {
        // The first description is the schema's own; the rest describe its parts.
      } else {
        out[k] = v;
      }
    });
  }

  function isNullSchema(s) { return s && s.type === 'null'; }

  // normalize returns {schema, nullable, name}: the flattened schema, whether null is allowed,
  // and the component name when it came from a $ref.
  function normalize(schema, depth) {
    var d = deref(schema);
    var s = flatten(schema, depth || 0);
    var nullable = false;
    var name = d.name;
    ['anyOf', 'oneOf'].forEach(function (k) {
      if (Array.isArray(s[k]) && s[k].length === 2 && s[k].some(isNullSchema)) {
        var other = s[k].filter(function (x) { return !isNullSchema(x); })[0];
        var inner = deref(other);
        var rest = Object.assign({}, s);
        delete rest[k];
        s = Object.assign({}, flatten(other, (depth || 0) + 1), rest.description ? { description: rest.description } : {});
        name = inner.name || name;
        nullable = true;
      }
    });
    if (Array.isArray(s.type) && s.type.indexOf('null') >= 0) {
      nullable = true;
      var types = s.type.filter(function (t) { return t !== 'null'; });
      s = Object.assign({}, s, { type: types.length === 1 ? types[0] : types });
    }
    return { schema: s, nullable: nullable, name: name };
  }

  function typeLabel(n, depth) {
    var s = n.schema;
    var label;
    if (s.const !== undefined) label = JSON.stringify(s.const);
    else if (s.type === 'array' || (s.items && !s.type)) {
      var item = s.items ? normalize(s.items, depth + 1) : null;
      label = 'array of ' + (item ? typeLabel(item, depth + 1) : 'any');
    } else if (Array.isArray(s.oneOf) || Array.isArray(s.anyOf)) label = 'one of ' + (s.oneOf || s.anyOf).length;
    else if (isMap(s)) label = 'map of string to ' + typeLabel(normalize(s.additionalProperties, depth + 1), depth + 1);
    else if (n.name && (s.type === 'object' || s.properties)) label = n.name;
    else {
      label = Array.isArray(s.type) ? s.type.join(' | ') : (s.type || (s.properties ? 'object' : 'any'));
      if (s.format) label += ' (' + s.format + ')';
      if (n.name && !s.enum) label = n.name + ': ' + label;
    }
    return n.nullable ? label + ' | null' : label;
  }

  function isMap(s) { return s.additionalProperties && typeof s.additionalProperties === 'object' && !s.properties; }

  function constraints(s) {
    var out = [];
    function add(label, value) { out.push(el('span', null, [label + ' ', code(value)])); }
    if (Array.isArray(s.enum) && s.const === undefined) {
      out.push(el('span', null, ['one of '].concat(s.enum.map(function (v, i) {
        return [i ? ', ' : '', code(typeof v === 'string' ? v : JSON.stringify(v))];
      }).reduce(function (a, b) { return a.concat(b); }, []))));
    }
    if (s.pattern) add('pattern', s.pattern);
    if (s.minimum !== undefined) add('minimum', s.minimum);
    if (s.maximum !== undefined) add('maximum', s.maximum);
    if (s.minLength !== undefined) add('min length', s.minLength);
    if (s.maxLength !== undefined) add('max length', s.maxLength);
    if (s.minItems !== undefined) add('min items', s.minItems);
    if (s.minProperties !== undefined) add('min entries', s.minProperties);
    if (s.default !== undefined) add('default', JSON.stringify(s.default));
    if (Array.isArray(s.examples) && s.examples.length) add('example', typeof s.examples[0] === 'string' ? s.examples[0] : JSON.stringify(s.examples[0]));
    (s.nots || (s.not ? [s.not] : [])).forEach(function (n) {
      if (n && Array.isArray(n.required)) add('never has', n.required.join(', '));
    });
    if (s.additionalProperties === false && s.properties) out.push(el('span', null, 'no other fields'));
    if (!out.length) return null;
    var box = el('div', 'constraints');
    out.forEach(function (o, i) { if (i) box.appendChild(document.createTextNode(' · ')); box.appendChild(o); });
    return box;
  }

  // expandable reports whether a schema has structure worth a nested table.
  function expandable(n, depth) {
    var s = n.schema;
    if (depth > MAX_DEPTH) return false;
    if (s.properties || s.oneOf || s.anyOf) return true;
    if (isMap(s)) return expandable(normalize(s.additionalProperties, depth + 1), depth + 1);
    if (s.items) return expandable(normalize(s.items, depth + 1), depth + 1);
    return false;
  }

  // schemaView renders a schema: an object as a table of its properties (nested objects as
  // collapsible nested tables), an array by its items, alternatives one by one.
  function schemaView(schema, depth, stack) {
    depth = depth || 0;
    stack = stack || [];
    var n = normalize(schema, depth);
    var s = n.schema;
    var box = el('div', 'schema');
    if (n.name && stack.indexOf(n.name) >= 0) {
      box.appendChild(el('p', 'schema-label', ['(', code(n.name), ', as above)']));
      return box;
    }
    if (n.name) stack = stack.concat([n.name]);
    if (depth > MAX_DEPTH) return box;

    if (s.type === 'array' || (s.items && !s.properties)) {
      box.appendChild(el('p', 'schema-label', [el('span', 'type', typeLabel(n, depth))]));
      if (s.items && expandable(normalize(s.items, depth + 1), depth + 1)) box.appendChild(schemaView(s.items, depth + 1, stack));
      return box;
    }
    var alts = s.oneOf || s.anyOf;
    if (Array.isArray(alts)) {
      box.appendChild(el('p', 'schema-label', s.oneOf ? 'Exactly one of:' : 'Any of:'));
      alts.forEach(function (alt, i) {
        var an = normalize(alt, depth + 1);
        var title = el('div', 'alt-title', [(i + 1) + '. ', el('span', 'type', typeLabel(an, depth + 1))]);
        var d = deref(alt).value;
        box.appendChild(el('div', 'alt nested', [title, d.description ? markdown(d.description) : null, schemaView(alt, depth + 1, stack)]));
      });
      return box;
    }
    if (isMap(s)) {
      box.appendChild(el('p', 'schema-label', [el('span', 'type', typeLabel(n, depth))]));
      var c = constraints(s);
      if (c) box.appendChild(c);
      var value = normalize(s.additionalProperties, depth + 1);
      if (expandable(value, depth + 1)) box.appendChild(schemaView(s.additionalProperties, depth + 1, stack));
      return box;
    }
    if (!s.properties) {
      box.appendChild(el('p', 'schema-label', [el('span', 'type', typeLabel(n, depth))]));
      var cs = constraints(s);
      if (cs) box.appendChild(cs);
      return box;
    }
    var required = s.required || [];
    var rows = Object.keys(s.properties).map(function (name) {
      var pn = normalize(s.properties[name], depth + 1);
      var p = pn.schema;
      var nameCell = el('td', 'name', [code(name), required.indexOf(name) >= 0 ? el('span', 'req', 'required') : null]);
      var about = el('td', null, [p.description ? markdown(p.description) : null, constraints(p)]);
      if (expandable(pn, depth + 1)) {
        about.appendChild(lazyDetails('nested', el('summary', null, 'fields of ' + name), function () {
          return schemaView(s.properties[name], depth + 1, stack);
        }));
      }
      return [nameCell, el('td', null, el('span', 'type', typeLabel(pn, depth + 1))), about];
    });
    var all = constraints(s);
    if (all) box.appendChild(all);
    box.appendChild(table(['Field', 'Type', 'Description'], rows));
    return box;
  }

  // ---- Operations ----------------------------------------------------------------------------

  function serverBase(url) {
    try {
      var path = new URL(url, location.origin).pathname;
      return path === '/' ? '' : path.replace(/\/$/, '');
    } catch (e) {
      return url;
    }
  }

  function operations() {
    var ops = [];
    Object.keys(doc.paths || {}).forEach(function (path) {
      var item = doc.paths[path];
      var servers = (item.servers || doc.servers || [{ url: '' }]).map(function (s) { return serverBase(s.url); });
      METHODS.forEach(function (method) {
        var op = item[method];
        if (!op) return;
        ops.push({
          method: method, path: path, op: op, item: item, servers: servers,
          id: 'op-' + (op.operationId || (method + path).replace(/[^A-Za-z0-9]+/g, '-')),
          tag: (op.tags && op.tags[0]) || 'Other'
        });
      });
    });
    return ops;
  }

  function securityView(op) {
    var sec = op.security !== undefined ? op.security : doc.security;
    if (!sec || !sec.length) return el('span', null, 'No authentication');
    var schemes = (doc.components && doc.components.securitySchemes) || {};
    var names = sec.map(function (req) {
      var keys = Object.keys(req);
      if (!keys.length) return 'none';
      return keys.map(function (k) { return schemeLabel(k, schemes[k]); }).join(' + ');
    });
    return el('span', null, 'Auth: ' + names.join(' or '));
  }

  function schemeLabel(key, scheme) {
    if (!scheme) return key;
    if (scheme.type === 'http' && scheme.scheme === 'bearer') return key + ' (Bearer ' + (scheme.bearerFormat || 'token') + ')';
    return key + ' (' + scheme.type + ')';
  }

  function parametersView(params) {
    var rows = params.map(function (p) {
      p = deref(p).value;
      return [
        el('td', 'name', [code(p.name), p.required ? el('span', 'req', 'required') : null]),
        p.in,
        el('span', 'type', p.schema ? typeLabel(normalize(p.schema, 1), 1) : ''),
        el('td', null, [p.description ? markdown(p.description) : null, p.schema ? constraints(normalize(p.schema, 1).schema) : null])
      ];
    });
    return table(['Name', 'In', 'Type', 'Description'], rows);
  }

  function contentView(content) {
    var box = el('div');
    Object.keys(content || {}).forEach(function (type) {
      box.appendChild(el('div', 'media', ['Content: ', code(type)]));
      var media = content[type] || {};
      if (media.schema) box.appendChild(schemaView(media.schema, 0, []));
    });
    return box;
  }

  function headersView(headers) {
    var rows = Object.keys(headers).map(function (name) {
      var h = deref(headers[name]).value;
      return [
        el('td', 'name', [code(name), h.required ? el('span', 'req', 'always') : null]),
        el('span', 'type', h.schema ? typeLabel(normalize(h.schema, 1), 1) : ''),
        el('td', null, h.description ? markdown(h.description) : null)
      ];
    });
    return table(['Header', 'Type', 'Description'], rows);
  }

  function responseView(status, ref) {
    var r = deref(ref).value;
    var klass = 's' + String(status).charAt(0);
    // The first paragraph is the summary line; further paragraphs go in the body.
    var paragraphs = (r.description || '').trim().split(/\n\s*\n/);
    var first = paragraphs.shift().replace(/\s*\n\s*/g, ' ');
    var summary = el('summary', null, [el('span', 'status ' + klass, status), inline(first)]);
    return lazyDetails('response', summary, function () {
      return el('div', 'response-body', [
        paragraphs.length ? markdown(paragraphs.join('\n\n')) : null,
        r.headers && Object.keys(r.headers).length ? headersView(r.headers) : null,
        r.content ? contentView(r.content) : null
      ]);
    }, klass === 's2');
  }

  function operationView(o) {
    var op = o.op;
    var fullPath = o.servers[0] + o.path;
    var section = el('section', 'op', [
      el('div', 'op-head', [el('span', 'method ' + o.method, o.method.toUpperCase()), el('code', 'op-path', fullPath)]),
      op.summary ? el('div', 'op-summary', op.summary) : null,
      el('div', 'op-meta', [
        securityView(op),
        op.operationId ? el('span', null, ['operationId ', code(op.operationId)]) : null,
        o.servers.length > 1 ? el('span', null, ['also at ', code(o.servers.slice(1).map(function (b) { return b + o.path; }).join(', '))]) : null
      ]),
      op.description ? markdown(op.description) : null
    ]);
    section.id = o.id;
    append(section, samplesView(o));
    var params = (o.item.parameters || []).concat(op.parameters || []);
    if (params.length) append(section, [el('h4', null, 'Parameters'), parametersView(params)]);
    if (op.requestBody) {
      var rb = deref(op.requestBody).value;
      append(section, [el('h4', null, 'Request body' + (rb.required ? '' : ' (optional)')),
        rb.description ? markdown(rb.description) : null, contentView(rb.content)]);
    }
    var responses = op.responses || {};
    append(section, [el('h4', null, 'Responses')].concat(Object.keys(responses).sort().map(function (status) {
      return responseView(status, responses[status]);
    })));
    section.dataset.search = [o.method, fullPath, op.summary, op.operationId, o.tag].join(' ').toLowerCase();
    return section;
  }

  // ---- Code samples and try-it ---------------------------------------------------------------
  // Every operation gets samples in curl, the Go SDK (sdk/go) and the TypeScript SDK
  // (sdk/typescript), written from the document: the operationId names the Go method
  // (oapi-codegen: <OperationId>WithResponse), the path and method the TypeScript call, and the
  // request body holds the required fields with the document's examples. Try-it sends the
  // request from this page with a TEST key (sandbox money only), kept in memory, never stored.

  var SAMPLE_UUID = '0194f3c2-7a1e-7c3d-9b2a-5d6e7f809a1b';
  var testKey = '';

  function humanize(name) {
    var words = String(name).replace(/[_-]+/g, ' ').trim();
    return words.charAt(0).toUpperCase() + words.slice(1);
  }

  // exampleValue is a value valid by the schema where the document allows: its example, const,
  // default or first enum value; for an object its required members.
  function exampleValue(schema, depth, name) {
    var s = normalize(schema, depth).schema;
    if (depth > MAX_DEPTH) return null;
    if (Array.isArray(s.examples) && s.examples.length) return s.examples[0];
    if (s.example !== undefined) return s.example;
    if (s.const !== undefined) return s.const;
    if (s.default !== undefined) return s.default;
    if (Array.isArray(s.enum) && s.enum.length) return s.enum[0];
    var alts = s.oneOf || s.anyOf;
    if (Array.isArray(alts) && alts.length) return exampleValue(alts[0], depth + 1, name);
    var type = Array.isArray(s.type) ? s.type[0] : s.type;
    if (type === 'object' || s.properties) {
      var out = {};
      requiredFields(s).forEach(function (p) { out[p] = exampleValue(s.properties[p], depth + 1, p); });
      return out;
    }
    if (isMap(s)) return {};
    if (type === 'array' || s.items) return s.minItems ? [exampleValue(s.items, depth + 1, name)] : [];
    if (type === 'integer' || type === 'number') return s.minimum !== undefined ? s.minimum : 1;
    if (type === 'boolean') return true;
    switch (s.format) {
      case 'uuid': return SAMPLE_UUID;
      case 'date-time': return '2026-01-31T09:30:00Z';
      case 'date': return '2026-01-31';
      case 'email': return 'customer@example.com';
      case 'uri': return 'https://example.com/';
    }
    return name ? humanize(name) : 'string';
  }

  function requiredFields(s) {
    return Object.keys(s.properties || {}).filter(function (p) { return (s.required || []).indexOf(p) >= 0; });
  }

  // paramExample is the example of a parameter; one the document gives none is given the
  // example of a parameter of the same name and place elsewhere in the document (a phone
  // number), when there is one.
  function paramExample(p) {
    var own = p.example !== undefined ? p.example : exampleValue(p.schema || {}, 1, p.name);
    if (own !== humanize(p.name)) return own;
    var found;
    operations().some(function (o) {
      return (o.item.parameters || []).concat(o.op.parameters || []).some(function (q) {
        var v = deref(q).value;
        var s = v.schema ? normalize(v.schema, 1).schema : {};
        var example = v.example !== undefined ? v.example : s.example !== undefined ? s.example : (s.examples || [])[0];
        if (v.name === p.name && v.in === p.in && example !== undefined) found = example;
        return found !== undefined;
      });
    });
    return found !== undefined ? found : own;
  }

  // sampleRequest is what every sample of an operation sends.
  function sampleRequest(o) {
    var params = (o.item.parameters || []).concat(o.op.parameters || []).map(function (p) { return deref(p).value; });
    var req = { path: [], query: [], idempotent: false, body: undefined, bodyType: null, bodySchema: null };
    params.forEach(function (p) {
      if (p.in === 'path') req.path.push({ name: p.name, schema: p.schema || {}, value: exampleValue(p.schema || {}, 1, p.name) });
      else if (p.in === 'query' && p.required) req.query.push({ name: p.name, schema: p.schema || {}, value: paramExample(p) });
      else if (p.in === 'header' && p.name === 'Idempotency-Key') req.idempotent = true;
    });
    if (o.op.requestBody) {
      var content = deref(o.op.requestBody).value.content || {};
      req.bodyType = Object.keys(content)[0] || null;
      if (req.bodyType === 'application/json') {
        req.bodySchema = normalize(content[req.bodyType].schema, 0).schema;
        req.body = exampleValue(content[req.bodyType].schema, 0);
      } else if (req.bodyType && content[req.bodyType].schema) {
        req.formSchema = normalize(content[req.bodyType].schema, 0).schema;
      }
    }
    var sec = o.op.security !== undefined ? o.op.security : (doc.security || []);
    req.auth = !sec.length || sec.some(function (r) { return !Object.keys(r).length; }) ? null
      : sec.some(function (r) { return 'apiKey' in r; }) ? 'apiKey' : 'session';
    req.api = o.servers[0] === '/api/v1';
    return req;
  }

  function pathWith(o, req, format) {
    return o.path.replace(/\{([^}]+)\}/g, function (all, name) { return format(name, req); });
  }

  function shellQuote(s) { return "'" + String(s).replace(/'/g, "'\\''") + "'"; }

  function curlSample(o, req) {
    var url = location.origin + o.servers[0] + pathWith(o, req, function (name) { return '$' + name.toUpperCase().replace(/[^A-Z0-9]/g, '_'); });
    if (req.query.length) url += '?' + req.query.map(function (q) { return q.name + '=' + encodeURIComponent(q.value); }).join('&');
    var lines = ['curl -s -X ' + o.method.toUpperCase() + ' "' + url + '"'];
    if (req.auth === 'apiKey') lines.push('-H "Authorization: Bearer $SIKA_API_KEY"');
    if (req.auth === 'session') lines.push('-H "Authorization: Bearer $SIKA_SESSION_TOKEN"');
    if (req.idempotent) lines.push('-H "Idempotency-Key: $(uuidgen)"');
    if (req.bodyType === 'application/json') {
      lines.push("-H 'Content-Type: application/json'");
      lines.push('-d ' + shellQuote(JSON.stringify(req.body)));
    } else if (req.bodyType === 'multipart/form-data') {
      lines.push('-F file=@document.pdf');
    }
    var vars = req.path.map(function (p) { return '# ' + '$' + p.name.toUpperCase().replace(/[^A-Z0-9]/g, '_') + ': ' + p.name + ' of the object'; });
    return vars.concat([lines.join(' \\\n  ')]).join('\n');
  }

  function goName(name) {
    return String(name).split(/[^A-Za-z0-9]+/).filter(Boolean).map(function (w) { return w.charAt(0).toUpperCase() + w.slice(1); }).join('');
  }

  // goLiteral is value written in Go as the type oapi-codegen makes of schema: a component
  // schema is the type of its name (sika.PayoutBatchItemRequest), an array a slice of its items'
  // type, an object its required fields (the optional ones are pointers, left out), a uuid
  // uuid.MustParse. indent is the tabs of the line the literal starts on; elide leaves out the
  // type of a struct inside a slice, as gofmt -s does.
  function goLiteral(schema, value, indent, elide) {
    var n = normalize(schema || {}, 1);
    var s = n.schema;
    indent = indent || '';
    var inner = indent + '\t';
    if (value === null || value === undefined) return 'nil';
    if (s.format === 'uuid' && typeof value === 'string') return 'uuid.MustParse(' + JSON.stringify(value) + ')';
    if (Array.isArray(value)) {
      var item = s.items || {};
      return '[]' + goType(item) + '{' + value.map(function (v) {
        return '\n' + inner + goLiteral(item, v, inner, true) + ',';
      }).join('') + (value.length ? '\n' + indent : '') + '}';
    }
    if (typeof value === 'object') {
      if (isMap(s) || !n.name) {
        return 'map[string]interface{}{' + Object.keys(value).map(function (k) {
          return '\n' + inner + JSON.stringify(k) + ': ' + goLiteral({}, value[k], inner) + ',';
        }).join('') + (Object.keys(value).length ? '\n' + indent : '') + '}';
      }
      var fields = requiredFields(s).filter(function (f) { return value[f] !== undefined; });
      return (elide ? '' : goType(schema)) + '{' + fields.map(function (f) {
        return '\n' + inner + goName(f) + ': ' + goLiteral(s.properties[f], value[f], inner) + ',';
      }).join('') + (fields.length ? '\n' + indent : '') + '}';
    }
    return JSON.stringify(value);
  }

  // goType is the Go type oapi-codegen gives schema where a literal needs it written.
  function goType(schema) {
    var n = normalize(schema || {}, 1);
    var s = n.schema;
    if (n.name) return 'sika.' + goName(n.name);
    var type = Array.isArray(s.type) ? s.type[0] : s.type;
    if (type === 'array' || s.items) return '[]' + goType(s.items || {});
    if (s.format === 'uuid') return 'uuid.UUID';
    if (type === 'integer') return 'int';
    if (type === 'number') return 'float32';
    if (type === 'boolean') return 'bool';
    if (type === 'string') return 'string';
    return 'interface{}';
  }

  function goSample(o, req) {
    var method = goName(o.op.operationId);
    var args = ['ctx'].concat(req.path.map(function (p) { return goLiteral(p.schema, p.value); }));
    // The params struct holds the query and header parameters: nil without a required one.
    var params = (o.item.parameters || []).concat(o.op.parameters || []).some(function (p) { return deref(p).value.in !== 'path'; });
    if (req.query.length) {
      args.push('&sika.' + method + 'Params{' + req.query.map(function (q) { return goName(q.name) + ': ' + goLiteral(q.schema, q.value); }).join(', ') + '}');
    } else if (params) {
      args.push('nil');
    }
    var call;
    if (req.bodyType === 'application/json') {
      var fields = requiredFields(req.bodySchema || {}).map(function (f) {
        return '\t' + goName(f) + ': ' + goLiteral(req.bodySchema.properties[f], req.body[f], '\t') + ',';
      });
      args.push('sika.' + method + 'JSONRequestBody{' + (fields.length ? '\n' + fields.join('\n') + '\n' : '') + '}');
      call = 'c.' + method + 'WithResponse(' + args.join(', ') + ')';
    } else if (req.bodyType) {
      args.push(req.bodyType === 'multipart/form-data' ? 'form.FormDataContentType(), &buf /* a multipart.Writer over buf with the file */' : JSON.stringify(req.bodyType) + ', body');
      call = 'c.' + method + 'WithBodyWithResponse(' + args.join(', ') + ')';
    } else {
      call = 'c.' + method + 'WithResponse(' + args.join(', ') + ')';
    }
    var ok = Object.keys(o.op.responses || {}).filter(function (st) { return /^2/.test(st); }).sort()[0];
    var okResponse = ok ? deref(o.op.responses[ok]).value : {};
    var json = okResponse.content && okResponse.content['application/json'];
    var result = !ok ? '' : json ? 'resp.JSON' + ok + (hasData(json.schema) ? '.Data' : '') : 'resp.Body // ' + Object.keys(okResponse.content || { '': 1 })[0];
    return [
      '// c, err := sika.New(sika.Options{BaseURL: ' + JSON.stringify(location.origin + '/api/v1') + ', APIKey: os.Getenv("SIKA_API_KEY")})',
      'resp, err := ' + call,
      'if err != nil {',
      '\treturn err // a *sika.Error for an answer that is not 2xx: errors.Is(err, sika.ErrorCode…)',
      '}',
      result ? '_ = ' + result : ''
    ].filter(Boolean).join('\n');
  }

  function hasData(schema) {
    var s = normalize(schema, 0).schema;
    return !!(s.properties && s.properties.data);
  }

  function tsSample(o, req) {
    var opts = [];
    var params = [];
    if (req.path.length) params.push('path: { ' + req.path.map(function (p) { return tsKey(p.name) + ': ' + JSON.stringify(p.value); }).join(', ') + ' }');
    if (req.query.length) params.push('query: { ' + req.query.map(function (q) { return tsKey(q.name) + ': ' + JSON.stringify(q.value); }).join(', ') + ' }');
    if (params.length) opts.push('params: { ' + params.join(', ') + ' }');
    if (req.bodyType === 'application/json') opts.push('body: ' + JSON.stringify(req.body, null, 2).replace(/\n/g, '\n  '));
    if (req.bodyType && req.bodyType !== 'application/json') {
      // openapi-fetch types the form's fields; the FormData itself goes out by bodySerializer.
      var fields = requiredFields(req.formSchema || {}).map(function (f) { return tsKey(f) + ': ""'; });
      opts.push('body: { ' + fields.join(', ') + ' },\n  bodySerializer: () => formData /* a FormData with the file */');
    }
    var call = 'await sika.' + o.method.toUpperCase() + '(' + JSON.stringify(o.path) + (opts.length ? ', {\n  ' + opts.join(',\n  ') + '\n}' : '') + ');';
    return [
      '// const sika = new Sika({ baseUrl: ' + JSON.stringify(location.origin + '/api/v1') + ', apiKey: process.env.SIKA_API_KEY });',
      'const data = ' + call
    ].join('\n');
  }

  function tsKey(name) { return /^[A-Za-z_$][A-Za-z0-9_$]*$/.test(name) ? name : JSON.stringify(name); }

  // samplesView shows the samples as tabs; the SDKs only call routes under /api/v1.
  function samplesView(o) {
    var req = sampleRequest(o);
    var samples = [['curl', curlSample(o, req)]];
    if (req.api) samples.push(['Go', goSample(o, req)], ['TypeScript', tsSample(o, req)]);
    var box = el('div', 'samples');
    var bar = el('div', 'tabs');
    bar.setAttribute('role', 'tablist');
    var panes = samples.map(function (s) {
      var pane = el('pre', 'sample', code(s[1]));
      pane.dataset.lang = s[0];
      return pane;
    });
    samples.forEach(function (s, i) {
      var tab = el('button', 'tab', s[0]);
      tab.type = 'button';
      tab.setAttribute('role', 'tab');
      tab.addEventListener('click', function () { select(i); });
      bar.appendChild(tab);
    });
    function select(i) {
      Array.prototype.forEach.call(bar.children, function (t, j) { t.setAttribute('aria-selected', i === j ? 'true' : 'false'); });
      panes.forEach(function (p, j) { p.hidden = i !== j; });
    }
    append(box, [el('h4', null, 'Examples'), bar].concat(panes));
    select(0);
    // Try-it only where an API key is what the operation takes: never a login or a registration
    // made from the reference, never a dashboard or staff route.
    if (req.api && req.auth === 'apiKey' && !/text\/event-stream/.test(JSON.stringify(Object.keys((deref((o.op.responses || {})['200'] || {}).value.content) || {})))) {
      box.appendChild(lazyDetails('try', el('summary', null, 'Try it with a TEST key'), function () { return tryView(o, req); }));
    }
    return box;
  }

  function field(label, input) { return el('label', 'try-field', [el('span', null, label), input]); }

  function input(value, placeholder) {
    var i = el('input');
    i.type = 'text';
    i.value = value === undefined ? '' : String(value);
    if (placeholder) i.placeholder = placeholder;
    i.autocomplete = 'off';
    i.spellcheck = false;
    return i;
  }

  // tryView sends the operation from this page, to this page's own origin, with a TEST key.
  function tryView(o, req) {
    var key = input(testKey, 'sk_test_…');
    key.type = 'password';
    key.className = 'try-key';
    key.addEventListener('input', function () {
      testKey = key.value.trim();
      document.querySelectorAll('input.try-key').forEach(function (k) { if (k !== key) k.value = testKey; });
    });
    var pathInputs = req.path.map(function (p) { return { name: p.name, input: input(p.value) }; });
    var queryInputs = req.query.map(function (q) { return { name: q.name, input: input(q.value) }; });
    var body = null;
    if (req.bodyType === 'application/json') {
      body = el('textarea', 'try-body');
      body.value = JSON.stringify(req.body, null, 2);
      body.rows = Math.min(14, body.value.split('\n').length + 1);
      body.spellcheck = false;
    }
    var send = el('button', 'try-send', 'Send');
    send.type = 'button';
    var out = el('div', 'try-out');
    var box = el('div', 'try-box', [
      el('p', 'try-note', 'Sent from this page to this server with your TEST key (sandbox money only). The key stays in this page; it is never stored. LIVE keys are refused here.'),
      req.auth ? field('TEST key', key) : null
    ].concat(pathInputs.map(function (p) { return field(p.name, p.input); }))
      .concat(queryInputs.map(function (q) { return field(q.name, q.input); }))
      .concat([body ? field('Body', body) : null, req.bodyType && !body ? el('p', 'try-note', 'This operation takes a file: use curl.') : null, send, out]));
    send.addEventListener('click', function () {
      out.textContent = '';
      var secret = key.value.trim();
      if (req.auth && secret.indexOf('sk_test_') !== 0) {
        out.appendChild(el('p', 'error-box', 'Only a TEST key (sk_test_…) can be used here.'));
        return;
      }
      var path = o.path;
      pathInputs.forEach(function (p) { path = path.replace('{' + p.name + '}', encodeURIComponent(p.input.value.trim())); });
      var query = queryInputs.filter(function (q) { return q.input.value !== ''; })
        .map(function (q) { return encodeURIComponent(q.name) + '=' + encodeURIComponent(q.input.value); }).join('&');
      var headers = { Accept: 'application/json' };
      if (req.auth) headers.Authorization = 'Bearer ' + secret;
      if (req.idempotent) headers['Idempotency-Key'] = newKey();
      var init = { method: o.method.toUpperCase(), headers: headers, credentials: 'omit', cache: 'no-store' };
      if (body) {
        headers['Content-Type'] = 'application/json';
        init.body = body.value;
      }
      send.disabled = true;
      var started = Date.now();
      fetch(o.servers[0] + path + (query ? '?' + query : ''), init).then(function (res) {
        return res.text().then(function (text) {
          var pretty = text;
          try { pretty = JSON.stringify(JSON.parse(text), null, 2); } catch (e) { /* not JSON */ }
          append(out, [
            el('div', 'try-status', [el('span', 'status s' + String(res.status).charAt(0), String(res.status)),
              ' ' + (Date.now() - started) + ' ms' + (headers['Idempotency-Key'] ? ' · Idempotency-Key ' + headers['Idempotency-Key'] : '')]),
            el('pre', 'try-response', code(pretty))
          ]);
        });
      }).catch(function (err) {
        out.appendChild(el('p', 'error-box', 'The request failed: ' + err.message));
      }).then(function () { send.disabled = false; });
    });
    return box;
  }

  function newKey() {
    if (window.crypto && crypto.randomUUID) return crypto.randomUUID();
    return 'try-' + Date.now() + '-' + Math.random().toString(36).slice(2);
  }

  // ---- Page ----------------------------------------------------------------------------------

  function render() {
    var info = doc.info || {};
    document.title = (info.title || 'API') + ' ' + (info.version || '');
    document.getElementById('brand').textContent = info.title || 'API reference';
    var content = document.getElementById('content');
    var nav = document.getElementById('nav');
    content.textContent = '';
    nav.textContent = '';

    append(content, [
      el('h1', null, [info.title || 'API', ' ', el('span', 'version', info.version || '')]),
      info.summary ? el('p', 'lead', info.summary) : null,
      el('p', null, ['Servers: '].concat((doc.servers || []).map(function (s, i) { return [i ? ', ' : '', code(s.url)]; })
        .reduce(function (a, b) { return a.concat(b); }, []))),
      markdown(info.description)
    ]);
    content.firstChild.id = 'top';

    var schemes = (doc.components && doc.components.securitySchemes) || {};
    if (Object.keys(schemes).length) {
      content.appendChild(el('h2', 'section', 'Authentication'));
      Object.keys(schemes).forEach(function (k) {
        content.appendChild(el('div', null, [el('h3', null, schemeLabel(k, schemes[k])), markdown(schemes[k].description)]));
      });
    }

    var ops = operations();
    var tags = (doc.tags || []).map(function (t) { return t; });
    ops.forEach(function (o) {
      if (!tags.some(function (t) { return t.name === o.tag; })) tags.push({ name: o.tag });
    });
    tags.forEach(function (tag, ti) {
      var tagged = ops.filter(function (o) { return o.tag === tag.name; });
      if (!tagged.length) return;
      var tagId = 'tag-' + ti;
      var heading = el('h2', 'section', tag.name);
      heading.id = tagId;
      var group = el('div', 'tag-group', [heading, tag.description ? markdown(tag.description) : null]);
      var list = el('ul');
      tagged.forEach(function (o) {
        group.appendChild(operationView(o));
        var a = el('a', null, [el('span', 'method ' + o.method, o.method.toUpperCase()), el('span', null, o.op.summary || o.path)]);
        a.href = '#' + o.id;
        a.title = o.servers[0] + o.path;
        var li = el('li', null, a);
        li.dataset.search = [o.method, o.servers[0] + o.path, o.op.summary, o.op.operationId, o.tag].join(' ').toLowerCase();
        list.appendChild(li);
      });
      content.appendChild(group);
      var navTitle = el('h2', null, el('a', null, tag.name));
      navTitle.firstChild.href = '#' + tagId;
      append(nav, [navTitle, list]);
    });

    var schemas = (doc.components && doc.components.schemas) || {};
    if (Object.keys(schemas).length) {
      var schemaHeading = el('h2', 'section', 'Schemas');
      schemaHeading.id = 'schemas';
      content.appendChild(schemaHeading);
      var schemaList = el('ul');
      Object.keys(schemas).forEach(function (name) {
        var s = schemas[name];
        var box = lazyDetails('nested', el('summary', null, [code(name), ' ', s.description ? inline(s.description.split('\n')[0]) : '']),
          function () { return schemaView({ $ref: '#/components/schemas/' + name }, 0, []); });
        box.id = 'schema-' + name;
        content.appendChild(box);
        var a = el('a', null, name);
        a.href = '#schema-' + name;
        schemaList.appendChild(el('li', null, a));
      });
      var navSchemas = el('h2', null, el('a', null, 'Schemas'));
      navSchemas.firstChild.href = '#schemas';
      append(nav, [navSchemas, schemaList]);
    }

    if (location.hash) {
      var target = document.getElementById(location.hash.slice(1));
      if (target) target.scrollIntoView();
    }
  }

  function applyFilter(text) {
    var q = text.trim().toLowerCase();
    document.querySelectorAll('[data-search]').forEach(function (node) {
      node.classList.toggle('hidden', q !== '' && node.dataset.search.indexOf(q) < 0);
    });
  }

  function setUp() {
    var toggle = document.getElementById('nav-toggle');
    var nav = document.getElementById('nav');
    toggle.addEventListener('click', function () {
      var open = nav.classList.toggle('open');
      toggle.setAttribute('aria-expanded', open ? 'true' : 'false');
    });
    nav.addEventListener('click', function (e) {
      if (e.target.closest('a')) { nav.classList.remove('open'); toggle.setAttribute('aria-expanded', 'false'); }
    });
    document.getElementById('filter').addEventListener('input', function (e) { applyFilter(e.target.value); });
  }

  // The document is next to this page: /docs/ reads /openapi.json, /api/v1/docs/ reads
  // /api/v1/openapi.json (with or without the trailing slash).
  function documentURL() {
    return location.pathname.replace(/docs\/?$/, '') + 'openapi.json';
  }

  setUp();
  fetch(documentURL(), { headers: { Accept: 'application/json' } })
    .then(function (res) {
      if (!res.ok) throw new Error('GET ' + documentURL() + ' answered ' + res.status);
      return res.json();
    })
    .then(function (json) { doc = json; render(); })
    .catch(function (err) {
      var content = document.getElementById('content');
      content.textContent = '';
      content.appendChild(el('p', 'notice error-box', 'The API document could not be loaded: ' + err.message));
    });
})();
