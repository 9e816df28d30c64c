/**
 * The LACChain networks: every fact the deployment needs about them, in one place.
 * Source: the public reference deployment (LACNetNetworks/besu-networks, commit 1e04790) as summarised in the
 * project's facts. Nothing else in the code base spells a network id, a bootnode or a contract address.
 */
import { NodeType } from './nodeTypes';

/** Our names for the networks, as operators know them. */
export const NETWORK_NAMES = ['mainnet-omega', 'open-protestnet', 'legacy-protestnet'] as const;
export type NetworkName = (typeof NETWORK_NAMES)[number];

/** Names of the Pulumi stacks and the network each one deploys to. */
export const STACK_NETWORKS = {
  mainnet: 'mainnet-omega',
  testnet: 'open-protestnet',
} as const satisfies Record<string, NetworkName>;
export type StackName = keyof typeof STACK_NETWORKS;
export const STACK_NAMES = Object.keys(STACK_NETWORKS) as StackName[];

/** Hardware for one node: what we recommend, and the minimum below which a mainnet node is refused. */
export interface Hardware {
  /** CPU cores. */
  cpu: number;
  /** Memory in GiB. */
  memoryGiB: number;
  /** Disk for the chain data in GiB. */
  diskGiB: number;
}

/** A genesis file published by the network, pinned by its digest (the file itself is never committed). */
export interface PinnedGenesis {
  /** Where the reference deployment publishes it. */
  url: string;
  /** SHA-256 of the exact bytes, lowercase hex. */
  sha256: string;
  /** Size in bytes. */
  bytes: number;
}

/** Everything about one network. */
export interface Network {
  name: NetworkName;
  /** Index in the reference installer's network menu. */
  menuIndex: number;
  /** The `deploy.network` value of the reference Helm values files. */
  helmName: string;
  /** Besu `network-id`, equal to the chain id. */
  networkId: number;
  /** Set when the network must not be used any more: the reason shown to the operator. */
  deprecated?: string;
  /** On-chain node permissioning contract. */
  nodesPermissioningContract: string;
  /** On-chain account permissioning contract (the reference Ansible roles leave it disabled). */
  accountsPermissioningContract: string;
  /** Prometheus push gateway the network's monitoring reads. */
  metricsPushHost: string;
  /** Ethstats server of the network's monitoring. */
  ethstatsUrl: string;
  /** Besu release the reference deployment runs today; the default for new nodes. */
  defaultBesuVersion: string;
  /** Size of the chain data volume. */
  volumeSize: string;
  genesis: PinnedGenesis;
  /** Bootnodes (full enodes) a node of each type starts with. */
  bootnodes: Record<NodeType, readonly string[]>;
  /** `max-peers` per node type where the reference deployment sets one. */
  maxPeers: Partial<Record<NodeType, number>>;
  /**
   * Our recommendation for a machine of this network: the network's own Ansible guide (LACNetNetworks/besu-networks
   * DEPLOY_NODE.md, "Minimum System Requirements"; it adds 70,000 read and 50,000 write IOPS on mainnet-omega and
   * open-protestnet). The SSH preflight step reports a machine below it.
   */
  recommendedHardware: Hardware;
  /**
   * The memory a node's pod may use (its limit; its request is the minimum): the network's own Helm guide
   * (DEPLOY_NODE_HELM.md: 8 GB on Pro-Testnet, 16 GB on Mainnet-Omega).
   */
  podMemoryLimitGiB: number;
  /** Below this a node is refused on a production network (unless the operator overrides it). */
  minimumHardware: Hardware;
  /** Whether a node below the minimum hardware is refused (production) or only warned about. */
  enforceMinimumHardware: boolean;
  /** Whether an SSH node may opt out of a pinned host key (test networks only; production always pins it). */
  allowsUnpinnedHostKey: boolean;
  /**
   * Whether the policy only warns (advisory) about a node the operator opted into unsafe or consensus-voting RPC
   * methods reachable from outside (test networks); on production such a node fails the preview and the plan.
   */
  rpcOptInsAdvisory: boolean;
  /**
   * Whether a pod's container that receives the node key may run from an image tag without a registry digest (test
   * networks only, flagged; production pins every such image, so a moved tag cannot take the key).
   */
  allowsUnpinnedKeyImages: boolean;
  /**
   * Whether a node's public IP and p2p host may be an address peers on the Internet cannot reach (private, shared,
   * link-local, documentation: a test network's lab); production refuses them, since the enode sent for
   * permissioning carries that address.
   */
  allowsNonPublicAddresses: boolean;
  /** Relay-hub (gas model) contract used by a writer's relay signer. */
  relayHubContract: string;
  /** Validator rotation contract. */
  validatorRotationContract: string;
  /** How the permissioning request reaches the network operator. */
  permissioningProcedure: string;
  /**
   * Where the request goes, and what comes before it (LACNetNetworks/besu-networks, permissioning_process of the
   * network, read 2026-11-28): the address or page it is sent to, the forms first, and where to ask.
   */
  permissioningRequestTo: string;
  /** Where an operator opens a support request when a restart does not help (lacchain:supportContact overrides). */
  supportContact: string;
}

const METRICS_PUSH_PORT = 9091;
/** Port of the networks' Prometheus push gateways. */
export { METRICS_PUSH_PORT };

const GENESIS_BASE_URL =
  'https://raw.githubusercontent.com/LACNetNetworks/besu-networks/master/roles/lacchain-writer-node/files';

const MAINNET_BOOTNODES = {
  M1: 'enode://ed664ba8ec6959b1b2bd70dce16286cb1688f2f8ab13b8571b0ba4eeb73df9d5f5acb32efff7aabd71fc865d374d2e9c96c524ca543c9aa65dd6543f83852521@35.229.62.151:60606',
  M2: 'enode://b10272c5206cd1ec12c6737a41df471e6384cde3e6522a212e3839be09981133eccdacc4ef1c7aacd3aeb63debfa82643d92820bb9f045245cb6badb74dff198@34.138.6.187:60606',
  M3: 'enode://76147831720d9a3d61e6cf31d03e38eba7bd46832c0691e9c1dd219c674acf738f1a00b9fea871f63d546686954a8ea6726fdbbe7a840d74ab2f774e501e6fa3@179.0.22.85:60606',
  M4: 'enode://92e2eadcf4720cc7f4c14424cb6af160452606a85278ef4e3d780cfd1cfe475a88db78d8f0cab50552f289ebfbfcdbc33a30b066c098042a1d704cc3133ff6a7@165.98.16.38:60606',
  M5: 'enode://14a4a9515a9c71b621068cebd9bcf7b435c8836d50b1b6321352d1fe83fc107f9931a8714ef0927cabe2e7c183f5a5dff4b598ce25c696b9b2b1f7c745344d12@35.243.235.182:60606',
  M6: 'enode://ed764e22cd77bbf597d450bcb1378ff2164ee7b4a47a386e3c3cf1c4d60c8898d20d8c861652d2d4c595997d0a0a36d4a10e69ea449d15e1cb31ea3f48cb092f@138.59.13.7:60606',
} as const;

const OPEN_PROTESTNET_BOOTNODES = {
  O1: 'enode://2ef018fceeac5def4d0c1233235e23351eb0881f4f42ac2a6aec8250cd21f302c28b9153799624edc325fa86de09ecf1c81c52e413d6a1efdef3e289021dc719@34.74.49.181:60606',
  O2: 'enode://6c1b747dd096769f4723c7f65fc7e368daa1acaae74d286b4c47416900d22d708022019114c15a31975343e334d3419e1ed847538e777ab8d592fb2e3ddca893@35.196.67.163:60606',
} as const;

/** The permissioning contracts: at the same addresses on every network. */
const PERMISSIONING_CONTRACTS = {
  nodesPermissioningContract: '0x0000000000000000000000000000000000009999',
  accountsPermissioningContract: '0x0000000000000000000000000000000000008888',
} as const;
/** What the networks in use take from the reference deployment: its Besu release and its chain data volume. */
const REFERENCE_DEPLOYMENT = { defaultBesuVersion: '23.4.1', volumeSize: '375Gi' } as const;

const m = MAINNET_BOOTNODES;
const o = OPEN_PROTESTNET_BOOTNODES;

/** The catalog, by our network name. */
export const NETWORKS: Record<NetworkName, Network> = {
  'mainnet-omega': {
    name: 'mainnet-omega',
    menuIndex: 0,
    helmName: 'main-net',
    networkId: 648541,
    ...PERMISSIONING_CONTRACTS,
    metricsPushHost: '35.231.59.254',
    ethstatsUrl: 'http://34.138.136.105:3000',
    ...REFERENCE_DEPLOYMENT,
    genesis: {
      url: `${GENESIS_BASE_URL}/genesis-mainnet.json`,
      sha256: '7f14dedfc5c3d0d9869d9f4f9ca54795ee71818da7c91df70dbe032cd8eb701c',
      bytes: 20458,
    },
    bootnodes: {
      writer: [m.M1, m.M2, m.M5, m.M6],
      validator: [m.M1, m.M2, m.M3, m.M4, m.M5, m.M6],
      bootnode: [m.M1, m.M2, m.M3, m.M4, m.M5, m.M6],
    },
    maxPeers: { bootnode: 250 },
    recommendedHardware: { cpu: 4, memoryGiB: 16, diskGiB: 375 },
    podMemoryLimitGiB: 16,
    minimumHardware: { cpu: 2, memoryGiB: 8, diskGiB: 200 },
    enforceMinimumHardware: true,
    allowsUnpinnedHostKey: false,
    rpcOptInsAdvisory: false,
    allowsUnpinnedKeyImages: false,
    allowsNonPublicAddresses: false,
    relayHubContract: '0xEAA5420AF59305c5ecacCB38fcDe70198001d147',
    validatorRotationContract: '0xed629f027a35B377F0a9Fd4560167e0AA85817Cf',
    permissioningProcedure:
      'Mainnet: complete the registration, name a focal point and sign the adscription contract, then send the enode ' +
      'and address through the LACChain support portal. After approval, restart the node.',
    supportContact: 'the LACChain support portal',
    permissioningRequestTo:
      'Where: first the registration form, https://lacnet.lacchain.net/lead-form-eng/ (a focal point answers by e-mail; ' +
      'then the adscription contract and the membership payment), then the enode and address through the customer and ' +
      'ticket portal, https://lacnet.lacchain.net/customer-and-support-portal/; questions to afiliaciones@lac-net.net.',
  },
  'open-protestnet': {
    name: 'open-protestnet',
    menuIndex: 1,
    helmName: 'open-protest-net',
    networkId: 648540,
    ...PERMISSIONING_CONTRACTS,
    metricsPushHost: '34.148.88.107',
    ethstatsUrl: 'http://34.138.63.51:3000',
    ...REFERENCE_DEPLOYMENT,
    genesis: {
      url: `${GENESIS_BASE_URL}/genesis-openprotestnet.json`,
      sha256: 'bba4833bf581e5deea9da443d9d58497c0511f317730fc91b3233a46071c0499',
      bytes: 20458,
    },
    bootnodes: { writer: [o.O1, o.O2], validator: [o.O1, o.O2], bootnode: [o.O1, o.O2] },
    maxPeers: {},
    recommendedHardware: { cpu: 4, memoryGiB: 16, diskGiB: 375 },
    podMemoryLimitGiB: 8,
    minimumHardware: { cpu: 2, memoryGiB: 4, diskGiB: 100 },
    enforceMinimumHardware: false,
    allowsUnpinnedHostKey: true,
    rpcOptInsAdvisory: true,
    allowsUnpinnedKeyImages: true,
    allowsNonPublicAddresses: true,
    relayHubContract: '0xa4B5eE2906090ce2cDbf5dfff944db26f397037D',
    validatorRotationContract: '0xB61Fb4d139E3A7F6c520D55e8C63193997866180',
    permissioningProcedure:
      'Testnet: e-mail the signed agreement form with the enode and address to the network operator.',
    supportContact: 'the network operator (the e-mail address your agreement form went to)',
    permissioningRequestTo:
      'Where: tech.support@lac-net.net. First agree to the terms and conditions ' +
      '(https://github.com/LACNetNetworks/besu-networks/tree/master/testnet/terms_and_conditions) and send the node ' +
      "authorization form they link, signed, to that address; then the enode and address, to the same address. A validator's " +
      'organization must first be a partner of the LACChain Alliance.',
  },
  'legacy-protestnet': {
    name: 'legacy-protestnet',
    menuIndex: 2,
    helmName: 'protest-net',
    networkId: 648529,
    deprecated:
      'legacy-protestnet (protest-net, network id 648529) is deprecated and no longer accepts new nodes: ' +
      'use open-protestnet (stack testnet) for testing or mainnet-omega (stack mainnet) for production',
    ...PERMISSIONING_CONTRACTS,
    metricsPushHost: '',
    ethstatsUrl: '',
    defaultBesuVersion: '21.1.6',
    volumeSize: '250Gi',
    genesis: {
      url: `${GENESIS_BASE_URL}/genesis-legacyprotestnet.json`,
      sha256: '30226ca5ef3a3a8bd69a9ec414bf695a1a80ff99a085619e4718d613f88e34bf',
      bytes: 20499,
    },
    bootnodes: { writer: [], validator: [], bootnode: [] },
    maxPeers: {},
    recommendedHardware: { cpu: 2, memoryGiB: 8, diskGiB: 250 },
    podMemoryLimitGiB: 8,
    minimumHardware: { cpu: 2, memoryGiB: 4, diskGiB: 100 },
    enforceMinimumHardware: false,
    allowsUnpinnedHostKey: false,
    rpcOptInsAdvisory: false,
    allowsUnpinnedKeyImages: false,
    allowsNonPublicAddresses: false,
    relayHubContract: '',
    validatorRotationContract: '',
    permissioningProcedure: '',
    supportContact: '',
    permissioningRequestTo: '',
  },
};

/** Networks in installer-menu order. */
export const NETWORK_MENU: readonly Network[] = Object.values(NETWORKS).sort((a, b) => a.menuIndex - b.menuIndex);

/** The network a stack deploys to. */
export function networkOfStack(stack: StackName): Network {
  return NETWORKS[STACK_NETWORKS[stack]];
}

/** The stack that deploys to a network (its name, for the deprecated network that no stack deploys to). */
export function stackOfNetwork(network: Pick<Network, 'name'>): string {
  return Object.entries(STACK_NETWORKS).find(([, name]) => name === network.name)?.[0] ?? network.name;
}

/** Looks a network up by our name or by its Helm `deploy.network` name. */
export function findNetwork(name: string): Network | undefined {
  return Object.values(NETWORKS).find((n) => n.name === name || n.helmName === name);
}
