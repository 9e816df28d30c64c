/**
 * The fixed cost of the offline plan: Node.js, ts-node and loading every module cli/plan.ts loads (the program,
 * its components, @pulumi/pulumi, @pulumi/kubernetes, @pulumi/command, @pulumi/random, the recording engine), then
 * exit without declaring anything. Any plan pays this, whatever its number of nodes: it is the plan's lower bound.
 */
import '@pulumi/pulumi';
import 'js-yaml';
import '../core/settings/load';
import '../core/settings/settingsFiles';
import '../core/genesis';
import '../program';
import '../cli/cli';
import '../cli/keyFile';
import '../tools/recording/engine';
import '../tools/recording/programTypes';
import '../cli/plan/remotePlan';
