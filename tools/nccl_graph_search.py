# Transcribes the constants of NCCL's graph search (models/nccl_versions.json "graph_search") from
# ../shared/reference/nccl-src/<tag>/ for every release line that lacks them, citing the line each
# value was read from as path:line@tag. Run it when a release line is added:
#   python3 tools/nccl_graph_search.py models/nccl_versions.json
# It only adds objects (a line that has graph_search keeps it) and leaves the rest of the file as
# it is. Lines whose tag has no speed array (NCCL 2.4, 2.5) get none: their search differs.
import json, re, sys, os, collections
root = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', 'shared', 'reference', 'nccl-src')
def lines(tag, path):
    return open(os.path.join(root, tag, path)).read().split('\n')
def find(tag, path, pattern, required=True):
    for i, l in enumerate(lines(tag, path), 1):
        if re.search(pattern, l): return i, l
    if required: raise SystemExit(f'{tag} {path}: no {pattern}')
    return None, None
def cite(tag, path, i, j=None):
    return f'{path}:{i}{"-%d" % j if j and j != i else ""}@{tag}'
def array(tag, path, name):
    ls = lines(tag, path)
    for i, l in enumerate(ls, 1):
        if re.search(r'float\s+' + name + r'\[\]\s*=', l):
            text, j = l, i
            while '}' not in text: j += 1; text += ls[j-1]
            nums = [float(x) for x in re.findall(r'[0-9]+\.[0-9]+|[0-9]+', text.split('{',1)[1].split('}')[0])]
            return nums, cite(tag, path, i, j)
    return None, None
def define(tag, name):
    i, l = find(tag, 'src/graph/topo.h', r'#define\s+' + name + r'\b', required=False)
    if not i and name.endswith('_BW'):  # NCCL 2.12 spells bandwidths as widths
        i, l = find(tag, 'src/graph/topo.h', r'#define\s+' + name[:-3] + r'_WIDTH\b', required=False)
    if not i: return None, None
    return float(re.search(r'#define\s+\w+\s+([0-9.]+)', l).group(1)), cite(tag, 'src/graph/topo.h', i)

def graph_search(tag):
    """The search's own constants (beyond the link bandwidths, speed arrays and PCIe rule that the
    tuner transcription keeps in graph_search): values and one citation per value."""
    g, src = collections.OrderedDict(), collections.OrderedDict()
    first = collections.OrderedDict()
    for fam, hexv in (('skylake', '0x55'), ('sapphire_rapids', '0x8F'), ('emerald_rapids', '0xCF')):
        i, l = find(tag, 'src/graph/topo.cc', r'modelId >= ' + hexv, required=False)
        if i: first[fam] = hexv; src['intel_first_model.' + fam] = cite(tag, 'src/graph/topo.cc', i)
    g['intel_first_model'] = first
    i, l = find(tag, 'src/graph/topo.h', r'define INTEL_P2P_OVERHEAD')
    m = re.search(r'(?:bw|speed) ?\* ?([0-9]+) ?/ ?([0-9]+)', l); g['intel_p2p_overhead'] = round(int(m.group(1)) / int(m.group(2)), 6)
    src['intel_p2p_overhead'] = cite(tag, 'src/graph/topo.h', i)
    i, l = find(tag, 'src/graph/paths.cc', r'ncclParamNvbDisable\(\) \|\|')
    g['nvlink_bounce'] = True; src['nvlink_bounce'] = cite(tag, 'src/graph/paths.cc', i)
    d, dl = find(tag, 'src/graph/paths.cc', r'int p2pLevel = PATH_')
    default = 'PXB' if 'PATH_PXB' in dl else 'SYS'
    lv = collections.OrderedDict(); two = collections.OrderedDict()
    ls = lines(tag, 'src/graph/paths.cc')
    for k in range(d + 1, d + 20):
        l = ls[k - 1]
        if 'p2pLevel = PATH_PXB' in l or 'p2pLevel = PATH_SYS' in l:
            ctx = ls[k - 2] + l
            to = 'PXB' if 'PATH_PXB' in l else 'SYS'
            if 'count <= 2' in ctx and 'AMD' in ctx: two['amd'] = to; src['p2p_level_two_gpus.amd'] = cite(tag, 'src/graph/paths.cc', k - 1, k)
            elif 'ARM' in ctx: lv['arm'] = to; src['p2p_level.arm'] = cite(tag, 'src/graph/paths.cc', k)
            elif 'INTEL' in ctx: lv['intel'] = to; src['p2p_level.intel'] = cite(tag, 'src/graph/paths.cc', k - 1, k)
    for fam in ('intel', 'amd', 'arm', 'other'):
        if fam not in lv: lv[fam] = default; src['p2p_level.' + fam] = cite(tag, 'src/graph/paths.cc', d)
    g['p2p_level'] = lv
    if two: g['p2p_level_two_gpus'] = two
    i, _ = find(tag, 'src/init.cc', r'maxChannels = MAXCHANNELS ?/ ?2')
    g['search_channels_divisor'] = 2; src['search_channels_divisor'] = cite(tag, 'src/init.cc', i)
    for key, name in (('search_timeout', 'NCCL_SEARCH_TIMEOUT'), ('search_timeout_same_channels', 'NCCL_SEARCH_TIMEOUT_SAMECHANNELS'),
                      ('search_global_timeout', 'NCCL_SEARCH_GLOBAL_TIMEOUT')):
        i, l = find(tag, 'src/graph/search.cc', r'#define ' + name + r' ')
        m = re.search(r'\(([0-9]+)U?L*L* ?<< ?([0-9]+)\)', l)
        g[key] = int(m.group(1)) << int(m.group(2)); src[key] = cite(tag, 'src/graph/search.cc', i)
    i, l = find(tag, 'src/graph/search.cc', r'> ?\.49\)')
    g['lower_speed_ratio'] = 0.49; src['lower_speed_ratio'] = cite(tag, 'src/graph/search.cc', i)
    i, l = find(tag, 'src/graph/search.cc', r'(bwIntra|speedIntra) (<|>=) 25\.0')
    g['duplicate_min_GBps'] = 25.0; src['duplicate_min_GBps'] = cite(tag, 'src/graph/search.cc', i)
    i, l = find(tag, 'src/graph/search.cc', r'ccMin > 80 && graph->bwIntra < 50\.0 && graph->nChannels > 4', required=False)
    if i:
        # ccMin > 80: the architectures after SM80 (Ada SM89, Hopper SM90, Blackwell SM100).
        g['duplicate_cap'] = collections.OrderedDict([('architectures', ['ada', 'hopper', 'blackwell']), ('below_GBps', 50.0), ('over_channels', 4)])
        src['duplicate_cap'] = cite(tag, 'src/graph/search.cc', i)
    return g, src

path = sys.argv[1]
text = open(path).read()
d = json.loads(text, object_pairs_hook=collections.OrderedDict)
for name, line in d['nccl_versions'].items():
    tag = line['tag']
    gs = line.get('graph_search', {})
    if 'speed_intra_GBps' not in gs: print(name, tag, 'no speed array: not searchable'); continue
    if 'search_timeout' in gs: print(name, 'has the search constants already'); continue
    extra, src = graph_search(tag)
    gs.update(extra)
    for k, v in src.items(): line['sources']['graph_search.' + k] = v
    print(name, tag, 'added', len(src), 'citations')
out = json.dumps(d, indent=2, ensure_ascii=False) + '\n'
json.loads(out)
open(path, 'w').write(out)
