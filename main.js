/** The Pulumi program as `pulumi up` runs it (package.json "main"): index.ts, built ahead of time when current. */
'use strict';
module.exports = require('./launcher').load('index');
