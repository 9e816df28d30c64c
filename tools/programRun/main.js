/** The program entry of the runs outside `pulumi up` (run.ts), loaded as main.js loads index.ts. */
'use strict';
module.exports = require('../../launcher').load('tools/programRun/entry');
