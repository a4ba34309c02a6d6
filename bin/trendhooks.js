#!/usr/bin/env node
'use strict';
require('../dist/cli.js').main();
