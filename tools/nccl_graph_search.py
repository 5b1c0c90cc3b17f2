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
    g, src = collections.OrderedDict(), collections.OrderedDict()
    sp = collections.OrderedDict(); cites = []
    for key, name in (('default', 'speedArrayIntra'), ('sm90', 'sm90SpeedArrayIntra'), ('sm100', 'sm100SpeedArrayIntra')):
        a, c = array(tag, 'src/graph/search.cc', name)
        if a: sp[key] = a; cites.append(c)
    sel, _ = find(tag, 'src/graph/search.cc', r'speedArray = .*(ccMin >= 90|ccMin >= 100)', required=False)
    g['speed_intra_GBps'] = sp
    src['speed_intra_GBps'] = ', '.join(cites + ([cite(tag, 'src/graph/search.cc', sel)] if sel else [])) + '; the array for ccMin at or above each smNN, else the default'
    i, l = find(tag, 'src/graph/topo.cc', r'"32.0 GT/s PCIe"')
    pairs = re.findall(r'\{ *"([0-9.]+) GT/s PCIe", *([0-9]+) *\}', l)
    g['pci_lane_rate'] = collections.OrderedDict((str(float(k)).rstrip('0').rstrip('.'), float(v)) for k, v in pairs)
    src['pci_lane_rate'] = cite(tag, 'src/graph/topo.cc', i) + '; kvDictPciGen, x100 Mb/s per lane'
    i, l = find(tag, 'src/graph/topo.cc', r'width ?\* ?speed ?/ ?80')
    g['pci_lane_divisor'] = 80; src['pci_lane_divisor'] = cite(tag, 'src/graph/topo.cc', i) + '; GB/s = width x rate / 80'
    cpu = collections.OrderedDict(); cc = []
    for fam, names in (('intel', ['BDW_QPI_BW', 'QPI_BW']), ('intel_skylake', ['SKL_QPI_BW']), ('intel_sapphire_rapids', ['SRP_QPI_BW']),
                       ('intel_emerald_rapids', ['ERP_QPI_BW']), ('amd', ['AMD_BW']), ('arm', ['ARM_BW'])):
        for n in names:
            v, c = define(tag, n)
            if v is not None: cpu[fam] = v; cc.append(c); break
    loc, locc = define(tag, 'LOC_BW')
    i, _ = find(tag, 'src/graph/topo.cc', r'\*(bw|width) = LOC_(BW|WIDTH)')
    if 'amd' not in cpu: cpu['amd'] = loc
    cpu['other'] = loc
    g['inter_cpu_GBps'] = cpu
    src['inter_cpu_GBps'] = ', '.join(cc + [cite(tag, 'src/graph/topo.cc', i), locc]) + '; ncclTopoGetInterCpuBw: LOC_BW for CPUs no rule names'
    first = collections.OrderedDict(); fc = []
    for fam, hexv in (('skylake', '0x55'), ('sapphire_rapids', '0x8F'), ('emerald_rapids', '0xCF')):
        i, l = find(tag, 'src/graph/topo.cc', r'modelId >= ' + hexv, required=False)
        if i and ('intel_' + fam) in cpu: first[fam] = int(hexv, 16); fc.append(cite(tag, 'src/graph/topo.cc', i))
    g['intel_first_model'] = first; src['intel_first_model'] = ', '.join(fc) + '; Intel family 6 models'
    g['local_GBps'] = loc; src['local_GBps'] = locc
    i, l = find(tag, 'src/graph/topo.h', r'define INTEL_P2P_OVERHEAD')
    m = re.search(r'(?:bw|speed) ?\* ?([0-9]+) ?/ ?([0-9]+)', l); g['intel_p2p_overhead'] = round(int(m.group(1)) / int(m.group(2)), 6)
    src['intel_p2p_overhead'] = cite(tag, 'src/graph/topo.h', i) + '; x%s/%s' % (m.group(1), m.group(2))
    i, l = find(tag, 'src/graph/paths.cc', r'ncclParamNvbDisable\(\) \|\|', required=False)
    g['nvlink_bounce'] = i is not None; src['nvlink_bounce'] = cite(tag, 'src/graph/paths.cc', i) + '; through one GPU, one NVLink hop'
    # p2p level rules
    d, dl = find(tag, 'src/graph/paths.cc', r'int p2pLevel = PATH_')
    default = 'PXB' if 'PATH_PXB' in dl else 'SYS'
    lv = collections.OrderedDict(); two = collections.OrderedDict(); pc = [cite(tag, 'src/graph/paths.cc', d)]
    ls = lines(tag, 'src/graph/paths.cc')
    for k in range(d, d + 20):
        l = ls[k - 1]
        if 'p2pLevel = PATH_PXB' in l or 'p2pLevel = PATH_SYS' in l:
            ctx = ls[k - 2] + l
            to = 'PXB' if 'PATH_PXB' in l else 'SYS'
            if 'count <= 2' in ctx and 'AMD' in ctx: two['amd'] = to
            elif 'ARM' in ctx: lv['arm'] = to
            elif 'INTEL' in ctx: lv['intel'] = to
            elif 'ZHAOXIN' in ctx: lv['zhaoxin'] = to
            else: continue
            pc.append(cite(tag, 'src/graph/paths.cc', k))
    for fam in ('intel', 'amd', 'arm'): lv.setdefault(fam, default)
    lv['other'] = default
    g['p2p_level'] = lv; src['p2p_level'] = ', '.join(pc) + '; ncclTopoCheckP2p'
    if two: g['p2p_level_two_gpus'] = two; src['p2p_level_two_gpus'] = src['p2p_level']
    i, _ = find(tag, 'src/init.cc', r'maxChannels = MAXCHANNELS ?/ ?2')
    hdr = 'src/include/device.h' if os.path.exists(os.path.join(root, tag, 'src/include/device.h')) and find(tag, 'src/include/device.h', r'#define MAXCHANNELS ', required=False)[0] else 'src/include/devcomm.h'
    j, l = find(tag, hdr, r'#define MAXCHANNELS ')
    g['max_search_channels'] = int(re.search(r'MAXCHANNELS ([0-9]+)', l).group(1)) // 2
    src['max_search_channels'] = cite(tag, 'src/init.cc', i) + ', ' + cite(tag, hdr, j)
    def tdef(name):
        i, l = find(tag, 'src/graph/search.cc', r'#define ' + name + r' ')
        m = re.search(r'\(([0-9]+)U?L*L* ?<< ?([0-9]+)\)', l)
        return int(m.group(1)) << int(m.group(2)), cite(tag, 'src/graph/search.cc', i)
    for key, name in (('search_timeout', 'NCCL_SEARCH_TIMEOUT'), ('search_timeout_same_channels', 'NCCL_SEARCH_TIMEOUT_SAMECHANNELS'),
                      ('search_global_timeout', 'NCCL_SEARCH_GLOBAL_TIMEOUT')):
        g[key], src[key] = tdef(name)
    i, l = find(tag, 'src/graph/search.cc', r'> ?\.49\)')
    g['lower_speed_ratio'] = 0.49; src['lower_speed_ratio'] = cite(tag, 'src/graph/search.cc', i)
    i, l = find(tag, 'src/graph/search.cc', r'(bwIntra|speedIntra) (<|>=) 25\.0')
    g['duplicate_min_GBps'] = 25.0; src['duplicate_min_GBps'] = cite(tag, 'src/graph/search.cc', i)
    i, l = find(tag, 'src/graph/search.cc', r'ccMin > 80 && graph->bwIntra < 50\.0 && graph->nChannels > 4', required=False)
    if i:
        g['duplicate_cap'] = {'above_compute_capability': 80, 'below_GBps': 50.0, 'over_channels': 4}
        src['duplicate_cap'] = cite(tag, 'src/graph/search.cc', i)
    i, _ = find(tag, 'src/graph/topo.h', r'cudaCompCap >= 80 +\? SM80_NVLINK_(BW|WIDTH)')
    g['compute_capability'] = collections.OrderedDict([('pascal', 60), ('volta', 70), ('turing', 75), ('ampere', 80), ('ada', 89), ('hopper', 90), ('blackwell', 100)])
    src['compute_capability'] = cite(tag, 'src/graph/topo.h', i) + '; NCCL keys its tables by compute capability; the number of each architecture is NVIDIA\'s CUDA numbering (SM60 Pascal ... SM100 Blackwell; SM86 Ampere GeForce and SM80 A100 are not told apart here), from memory'
    g['sources'] = src
    return g

path = sys.argv[1]
text = open(path).read()
d = json.loads(text, object_pairs_hook=collections.OrderedDict)
out = text
for name, line in d['nccl_versions'].items():
    tag = {'v2.18.5-1': 'v2.18.3-1'}.get(line['tag'], line['tag'])
    if 'graph_search' in line: print(name, 'has graph_search already: left'); continue
    if not os.path.exists(os.path.join(root, tag, 'src/graph/search.cc')) or not array(tag, 'src/graph/search.cc', 'speedArrayIntra')[0]:
        print(name, tag, 'no speed array: left without graph_search'); continue
    gs = graph_search(tag)
    start = out.index('\n    "%s": {' % name)
    m = re.compile(r'\n(      )"sources": \{\n').search(out, start)
    ind = m.group(1)
    body = json.dumps(gs, indent=2).replace('\n', '\n' + ind)
    src_line = '\n' + ind + '  "graph_search": "NCCL ' + tag + ': each key of graph_search cites its own path:line@tag in graph_search/sources",'
    out = out[:m.start()] + '\n' + ind + '"graph_search": ' + body + ',' + out[m.start():m.end()-1] + src_line + '\n' + out[m.end():]
    print(name, tag, 'added')
json.loads(out)
open(path, 'w').write(out)
