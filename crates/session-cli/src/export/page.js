(function(){
'use strict';
// The session viewer (see html.rs for the payload and the entry points). The page renders ONE
// payload: a metadata line (JSON), then the session file's exact bytes, rows a migration
// rewrote, and one line of sanitised Markdown HTML per user/assistant message with text.
// Transcript text reaches the page only through textContent, except the Markdown lines, which
// are ammonia's output. The tree (left) holds every entry; the main pane the selected path.
var D=document,P=D.getElementById('payload'),TREE=D.getElementById('tree'),MAIN=D.getElementById('path'),VIEW=D.getElementById('viewer'),RES=D.getElementById('results'),COUNT=D.getElementById('count'),SEARCH=D.getElementById('search');
if(!P||!TREE||!MAIN)return;
var FOLD=12,BATCH=200,dec=new TextDecoder(),enc=new TextEncoder(),SYNC=P.getAttribute('data-enc')==='base64';
var buf,meta,nodes,byId,rows,rowText,mdAt,mdRows,md,liOf,chainOf,det,queue,bg,busy,added,leafIdx,path,pathPos,pathDone,tools,selected,followLeaf,searchText,filter='default',query='',gen=0;
function reset(){buf=null;meta=null;nodes=[];byId=Object.create(null);rows=[];rowText=[];mdAt=[];md=[];liOf=[];chainOf=[];det=[];queue=[];bg=[];busy=false;added=[];leafIdx=-1;path=[];pathPos=Object.create(null);pathDone=0;tools=Object.create(null);selected=-1;followLeaf=true;searchText=[];gen++;}
reset();
function el(tag,cls,text){var e=D.createElement(tag);if(cls)e.className=cls;if(text!=null)e.textContent=text;return e;}
function b64(s){if(Uint8Array.fromBase64)return Uint8Array.fromBase64(s);var bin=atob(s),n=bin.length,u=new Uint8Array(n);for(var i=0;i<n;i++)u[i]=bin.charCodeAt(i);return u;}
function concat(parts){var n=0,i,o=0;for(i=0;i<parts.length;i++)n+=parts[i].length;var u=new Uint8Array(n);for(i=0;i<parts.length;i++){u.set(parts[i],o);o+=parts[i].length;}return u;}
function inflate(u){var ds=new DecompressionStream('deflate-raw'),w=ds.writable.getWriter();w.write(u).catch(function(){});w.close().catch(function(){});return new Response(ds.readable).arrayBuffer().then(function(b){return new Uint8Array(b);});}
function thousands(n){var s=String(n);return /^-?\d+$/.test(s)?s.replace(/\B(?=(\d{3})+(?!\d))/g,','):s;}
function str(v){return v==null?null:(typeof v==='string'?v:JSON.stringify(v));}
function oneLine(s){return s.replace(/\s+/g,' ').trim();}
function excerpt(s,max){s=oneLine(s.length>max*4?s.slice(0,Math.max(max*4,64)):s);var a=Array.from(s);return a.length<=max?s:a.slice(0,max-1).join('')+'…';}
// The body starts after the metadata line; node offsets are into the body.
var BODY=0;
function parse(i){var n=nodes[i];try{return JSON.parse(rowText[i]!=null?rowText[i]:dec.decode(buf.subarray(BODY+n[9],BODY+n[9]+n[8])));}catch(e){return null;}}
// A parsed row is kept while its node and entry are built, then dropped (a row's text can be large).
function row(i){if(rows[i]!==undefined)return rows[i];var v=parse(i);rows[i]=v;return v;}
function drop(i){if(pathPos[i]===undefined||pathPos[i]<pathDone)rows[i]=undefined;}
function msg(i){var v=row(i);return v&&nodes[i][1]==='message'&&v.message&&typeof v.message==='object'&&!Array.isArray(v.message)?v.message:null;}
// The role as the metadata gives it (no parse): pi's filters and the tree's classes use it.
function role(i){return nodes[i][1]==='message'?nodes[i][2]:null;}
function mdOf(i){if(md[i]!==undefined)return md[i];var r=null,a=mdAt[i];if(a){try{r=JSON.parse(dec.decode(buf.subarray(a[0],a[1]))).slice(1);}catch(e){r=null;}}md[i]=r;return r;}
function shortOf(id){var i=byId[id];return i===undefined?String(id).slice(0,8):nodes[i][4];}
function contentText(c){if(c==null)return '';if(typeof c==='string')return c;if(!Array.isArray(c))return JSON.stringify(c);var parts=[],thinking=false;c.forEach(function(b){var t=b&&str(b.type)||'';if(t==='text'){var x=str(b.text)||'';if(x.trim())parts.push(x);}else if(t==='thinking')thinking=true;else if(t==='image')parts.push('[image]');else if(t==='toolCall')parts.push(toolCallText(b));else if(t==='')parts.push(JSON.stringify(b));else parts.push('['+t+']');});if(!parts.length&&thinking)parts.push('(thinking)');return parts.join(' ');}
function toolCallText(b){var n=str(b.name)||'?';return b.arguments==null?'→ '+n+'()':'→ '+n+' '+JSON.stringify(b.arguments);}
function msgText(m){var r=str(m.role)||'message',c=contentText(m.content),t;if(r==='assistant'){var e=str(m.errorMessage),s=str(m.stopReason);t=!c?(e!=null?'('+(s||'error')+': '+e+')':'(no content, '+(s||'no reply')+')'):(e!=null?c+' ⚠ '+e:c);}else if(r==='toolResult'){t=(m.isError===true?'✗ ':'')+(str(m.toolName)||'tool')+': '+c;}else if(r==='bashExecution'){t='$ '+(str(m.command)||'')+(typeof m.exitCode==='number'?' → exit '+m.exitCode:'');}else if(r==='custom'){t=(str(m.customType)||'')+': '+c;}else if(r==='branchSummary'||r==='compactionSummary'){t=str(m.summary)||'';}else t=c;return t||'(empty)';}
function summaryText(i){var n=nodes[i],v=row(i);if(!v)return '(cannot decode)';switch(n[1]){
case 'message':var m=v.message;return m&&typeof m==='object'&&!Array.isArray(m)?msgText(m):(m===undefined?'(no message)':'(invalid message: '+JSON.stringify(m)+')');
case 'thinking_level_change':return 'thinking level '+(str(v.thinkingLevel)||'');
case 'model_change':return (str(v.provider)||'')+'/'+(str(v.modelId)||'');
case 'compaction':case 'branch_summary':return str(v.summary)||'';
case 'custom':return (str(v.customType)||'')+(v.data===undefined?'':' '+JSON.stringify(v.data));
case 'custom_message':return (str(v.customType)||'')+': '+contentText(v.content);
case 'label':var t=shortOf(str(v.targetId)||'');return v.label?t+' → "'+(str(v.label))+'"':t+' → (cleared)';
case 'session_info':return v.name!=null?'name "'+str(v.name).trim()+'"':'name cleared';
default:return JSON.stringify(v);}}
// pi 0.73.1's filters (template.js filterNodes): the leaf always shows; assistant messages
// with only tool calls are hidden unless they stopped on an error; settings entries (label,
// custom, model and thinking-level changes) are hidden by default; 'no-tools' also hides tool
// results; 'user-only' keeps user messages; 'labeled-only' labeled entries; 'all' everything.
var SETTINGS={label:1,custom:1,model_change:1,thinking_level_change:1};
function hasText(c){if(typeof c==='string')return c.trim().length>0;if(Array.isArray(c))for(var k=0;k<c.length;k++){var b=c[k];if(b&&b.type==='text'&&b.text&&String(b.text).trim().length>0)return true;}return false;}
function toolOnly(i){return (nodes[i][6]&8)!==0;}
function passes(i,mode){var n=nodes[i];if(n[6]&2)return true;if(toolOnly(i))return false;var settings=SETTINGS[n[1]]===1,r=role(i);
switch(mode){case 'user-only':return r==='user';case 'no-tools':return !settings&&r!=='toolResult';case 'labeled-only':return n[5]!=null;case 'all':return true;default:return !settings;}}
function extract(c){if(typeof c==='string')return c;if(Array.isArray(c))return c.filter(function(b){return b&&b.type==='text'&&b.text;}).map(function(b){return b.text;}).join('');return '';}
function searchable(i){if(searchText[i]!==undefined)return searchText[i];var n=nodes[i],v=rows[i]!==undefined?rows[i]:parse(i),p=[];if(n[5]!=null)p.push(n[5]);if(v)switch(n[1]){
case 'message':var m=v.message&&typeof v.message==='object'?v.message:null;if(m){p.push(str(m.role)||'');if(m.content)p.push(extract(m.content));if(m.role==='bashExecution'&&m.command)p.push(str(m.command));}break;
case 'custom_message':p.push(str(v.customType)||'');p.push(typeof v.content==='string'?v.content:extract(v.content));break;
case 'compaction':p.push('compaction');break;case 'branch_summary':p.push('branch summary',str(v.summary)||'');break;
case 'model_change':p.push('model',str(v.modelId)||'');break;case 'thinking_level_change':p.push('thinking',str(v.thinkingLevel)||'');break;}
var s=p.join(' ').toLowerCase();searchText[i]=s;return s;}
function matches(i,tokens){if(!tokens.length)return true;var s=searchable(i);for(var k=0;k<tokens.length;k++)if(s.indexOf(tokens[k])<0)return false;return true;}
// ---- the tree ----
function nodeClasses(i){var n=nodes[i],f=n[6],r=role(i),c='node k-'+n[1];if(r)c+=' r-'+r.replace(/[^A-Za-z0-9_-]/g,'_');if(f&1)c+=' on-path';if(f&2)c+=' leaf';if(i===selected)c+=' sel';
if(SETTINGS[n[1]]===1)c+=' fs';if(r==='toolResult')c+=' ft';if(r==='user')c+=' fu';if(n[5]!=null)c+=' fl';if(toolOnly(i))c+=' fh';return c;}
function nodeLink(i){var n=nodes[i],a=el('a');a.href='#entry-'+n[0];a.appendChild(el('span','kind',n[1]==='message'?(role(i)||n[2]):n[2]));
if(n[5]!=null)a.appendChild(el('span','badge',n[5]));if(n[6]&2)a.appendChild(el('span','marker','◀ leaf'));if(n[7].length>1)a.appendChild(el('span','marker bp','◆ '+n[7].length));
if(n[1]==='compaction')a.appendChild(el('span','marker cut','✂'));if(n[1]==='branch_summary')a.appendChild(el('span','marker cut','↩'));if(n[6]&4)a.appendChild(el('span','marker cut','⇤'));a.appendChild(D.createTextNode(' '));a.appendChild(el('span','excerpt',excerpt(summaryText(i),100)));return a;}
function treeNode(i){var n=nodes[i],li=el('li',nodeClasses(i));li.setAttribute('data-id',n[0]);if(n[3]!=null)li.setAttribute('data-line',String(n[3]));li.appendChild(nodeLink(i));liOf[i]=li;drop(i);return li;}
function refreshNode(i){var li=liOf[i];if(!li)return;li.className=nodeClasses(i);li.replaceChildren(nodeLink(i));}
function chain(ul,start){var c={el:ul,next:start};return c;}
function branchLabel(c,k,n){var f=nodes[c][6],size=meta.size[c];return 'branch '+(k+1)+' of '+n+' · '+thousands(size)+' '+(size===1?'entry':'entries')+(f&1?' · current':'')+' — '+excerpt(summaryText(c),60);}
// A branch point's children: the branches off the current path, each in a details element
// (folded when larger than FOLD), and the current path's child continuing in the same list,
// so that the current path stays at one indentation however many branch points it passes.
function kids(list,ul){if(list.length===1)return [chain(ul,list[0])];var fork=el('li','fork'),out=[],n=list.length,cur=-1;
list.forEach(function(c,k){var f=nodes[c][6];if(f&1&&cur<0){cur=c;fork.appendChild(el('div','current','↓ '+branchLabel(c,k,n)));drop(c);return;}
var dd=el('details','branch');dd.appendChild(el('summary',null,branchLabel(c,k,n)));var sub=el('ul');dd.appendChild(sub);fork.appendChild(dd);det[c]=dd;
drop(c);var ch=chain(sub,c);if(meta.size[c]<=FOLD)dd.open=true;dd.addEventListener('toggle',function(){if(dd.open&&ch.next>=0)fill(ch,Infinity);});out.push(ch);});
ul.appendChild(fork);if(cur>=0)out.unshift(chain(ul,cur));return out;}
function fill(c,budget){var done=0;while(c.next>=0&&done<budget){var i=c.next;c.el.appendChild(treeNode(i));chainOf[i]=c;done++;var k=nodes[i][7];c.next=-1;
if(k.length===1)c.next=k[0];else if(k.length>1)kids(k,c.el).forEach(function(ch){(SYNC||isOpen(ch)?queue:bg).push(ch);});}return done;}
function isOpen(ch){var d=ch.el.parentNode;return !d||d.tagName!=='DETAILS'||d.open;}
function pump(){busy=false;var g=gen,t0=performance.now();while(performance.now()-t0<12){if(pathDone<path.length){renderPath(pathDone+BATCH);continue;}var c=queue.length?queue[0]:bg[0];if(!c)break;fill(c,BATCH);if(c.next<0)(queue.length?queue:bg).shift();}
if(g===gen&&(queue.length||bg.length||pathDone<path.length))schedule();else if(g===gen)mark('tree');}
function schedule(){if(!busy){busy=true;requestAnimationFrame(pump);}}
function buildTree(){TREE.replaceChildren();liOf=[];chainOf=[];det=[];queue=[];bg=[];var ul=el('ul','tree');TREE.appendChild(ul);if(!nodes.length){TREE.appendChild(el('p',null,'(no entries)'));return;}
kids(meta.roots,ul).forEach(function(ch){queue.push(ch);});if(SYNC){while(queue.length)fill(queue.shift(),Infinity);}}
// Opens the branches on the way to node i and renders its chain through it.
function revealNode(i){var up=[];for(var j=i;j>=0&&up.length<=nodes.length;j=meta.parent[j])up.push(j);up.reverse();
for(var k=0;k<up.length;k++){var j=up[k];if(det[j])det[j].open=true;if(liOf[j])continue;var q=queue.concat(bg);for(var m=0;m<q.length;m++){var c=q[m];if(c.next>=0&&inChain(c,j)){fill(c,Infinity);break;}}}
return liOf[i];}
function inChain(c,j){for(var x=j;x>=0;x=meta.parent[x]){if(x===c.next)return true;if(liOf[x])return false;}return false;}
// ---- the main pane: the selected path ----
function pathThrough(i){var up=[];for(var j=i;j>=0&&up.length<=nodes.length;j=meta.parent[j])up.push(j);up.reverse();
if(nodes[i][6]&1&&leafIdx>=0){up=[];for(j=leafIdx;j>=0&&up.length<=nodes.length;j=meta.parent[j])up.push(j);up.reverse();return up;}
var seen=0;for(j=i;nodes[j][7].length&&seen<=nodes.length;seen++){j=nodes[j][7][nodes[j][7].length-1];up.push(j);}return up;}
function setPath(p){path=p;pathPos=Object.create(null);p.forEach(function(j,k){pathPos[j]=k;});pathDone=0;tools=Object.create(null);MAIN.replaceChildren();}
function pre(cls,text){return el('pre',cls,text);}
function textDiv(t){return el('div','text',t);}
function mdDiv(h){var d=el('div','md');d.innerHTML=h;return d;}// h: ammonia's output (see html.rs)
function resultBody(m){if(typeof m.content==='string')return m.content;if(Array.isArray(m.content))return m.content.map(function(b){var t=b&&str(b.type);return t==='text'?str(b.text):t==='image'?'[image]':null;}).filter(function(x){return x!=null;}).join('\n');return m.content==null?'':JSON.stringify(m.content);}
function resultEl(j,m){var w=el('div','tool-result'+(m.isError===true?' error':''));w.id='entry-'+nodes[j][0];w.setAttribute('data-entry',nodes[j][0]);
var h=el('div','tool-head');h.appendChild(el('span',null,m.isError===true?'✗ error':'result'));h.appendChild(D.createTextNode(' '));h.appendChild(idLink(j));w.appendChild(h);w.appendChild(pre('out',resultBody(m)));return w;}
function idLink(j){var a=el('a','id',nodes[j][4]);a.href='#entry-'+nodes[j][0];a.title=nodes[j][0];return a;}
function findResult(callId,from){if(callId==null)return -1;for(var k=from+1;k<path.length&&k<from+400;k++){var j=path[k],m=msg(j);if(m&&m.role==='toolResult'&&str(m.toolCallId)===callId)return j;}return -1;}
function blocks(i,c,out,k0){if(c==null)return;var mdl=mdOf(i),tk=0;if(typeof c==='string'){out.appendChild(mdl&&mdl[0]!=null?mdDiv(mdl[0]):textDiv(c));return;}if(!Array.isArray(c)){out.appendChild(pre(null,JSON.stringify(c,null,2)));return;}
c.forEach(function(b){var t=b&&str(b.type);if(t==='text'){var h=mdl&&mdl[tk];tk++;out.appendChild(h!=null?mdDiv(h):textDiv(str(b.text)||''));}
else if(t==='thinking'){var d=el('details','thinking');d.open=true;d.appendChild(el('summary',null,'thinking'));d.appendChild(textDiv(str(b.thinking)||''));out.appendChild(d);}
else if(t==='toolCall'){var w=el('div','tool');var h=el('div','tool-head');h.appendChild(el('span','tool-name','→ '+(str(b.name)||'')));w.appendChild(h);w.appendChild(pre('args',b.arguments==null?'':JSON.stringify(b.arguments,null,2)));
var cid=str(b.id),r=k0>=0?findResult(cid,k0):-1;if(r>=0){w.appendChild(resultEl(r,msg(r)));tools[r]=true;if(msg(r).isError===true)w.className+=' error';}else if(cid!=null)tools['c:'+cid]=w;out.appendChild(w);}
else if(t==='image'){var mime=str(b.mimeType)||'',data=str(b.data)||'';if(/^image\/[A-Za-z0-9+.\-]+$/.test(mime)&&/^[A-Za-z0-9+\/=\r\n]+$/.test(data)){var img=el('img');img.alt='image';img.src='data:'+mime+';base64,'+data;out.appendChild(img);}else out.appendChild(textDiv('[image]'));}
else out.appendChild(pre(null,JSON.stringify(b,null,2)));});}
function note(parts){var p=el('p','note');parts.forEach(function(x){p.appendChild(typeof x==='string'?D.createTextNode(x):x);});return p;}
function link(id){var a=el('a');a.href='#entry-'+id;a.appendChild(el('code',null,shortOf(id)));return a;}
function entryEl(i,k){var n=nodes[i],v=row(i),m=msg(i),r=m?str(m.role):null,f=n[6];
var d=el('div','entry k-'+n[1]+(r?' r-'+r.replace(/[^A-Za-z0-9_-]/g,'_'):'')+(f&1?' on-branch':'')+(f&2?' leaf':'')+(i===selected?' sel':''));d.id='entry-'+n[0];d.setAttribute('data-entry',n[0]);
var h=el('div','head');h.appendChild(el('span','kind',m?(r||'message'):n[2]));h.appendChild(D.createTextNode(' '));h.appendChild(idLink(i));if(v&&v.timestamp!=null){h.appendChild(D.createTextNode(' '));h.appendChild(el('span','time',str(v.timestamp)));}
if(n[5]!=null)h.appendChild(el('span','badge',n[5]));if(f&2)h.appendChild(el('span','marker','◀ leaf'));if(m&&r==='assistant'&&m.provider!=null&&m.model!=null)h.appendChild(el('span','model',str(m.provider)+'/'+str(m.model)));d.appendChild(h);
var b=el('div','body');d.appendChild(b);
if(!v){b.appendChild(textDiv('(cannot decode)'));return d;}
switch(n[1]){case 'message':if(!m){b.appendChild(textDiv(summaryText(i)));break;}
if(r==='toolResult'){var w=el('div','tool orphan');var call=tools['c:'+str(m.toolCallId)];if(call){call.appendChild(resultEl(i,m));if(m.isError===true)call.className+=' error';return null;}w.appendChild(el('div','tool-head',(str(m.toolName)||'tool')));w.appendChild(resultEl(i,m));b.appendChild(w);d.removeAttribute('id');break;}
if(r==='bashExecution'){b.appendChild(pre('out','$ '+(str(m.command)||'')+'\n'+(str(m.output)||'')));break;}
blocks(i,m.content,b,k);if(r==='assistant'&&m.errorMessage!=null)b.appendChild(el('p','error',str(m.errorMessage)));break;
case 'model_change':b.appendChild(note(['model → ',el('code',null,(str(v.provider)||'')+'/'+(str(v.modelId)||''))]));break;
case 'thinking_level_change':b.appendChild(note(['thinking level → '+(str(v.thinkingLevel)||'')]));break;
case 'compaction':b.appendChild(note(['compaction: '+(str(v.tokensBefore)||'?')+' tokens before; the context keeps entries from ',v.firstKeptEntryId!=null?link(str(v.firstKeptEntryId)):'?']));b.appendChild(textDiv(str(v.summary)||''));break;
case 'branch_summary':b.appendChild(note(['summary of the branch left at ',v.fromId!=null?link(str(v.fromId)):'?']));b.appendChild(textDiv(str(v.summary)||''));break;
case 'custom_message':b.appendChild(note(['custom message ',el('code',null,str(v.customType)||'')]));blocks(i,v.content,b,-1);break;
case 'label':b.appendChild(note(['label on ',link(str(v.targetId)||''),': '+(v.label!=null?str(v.label):'(cleared)')]));break;
default:b.appendChild(textDiv(summaryText(i)));}
var raw=el('details','raw');raw.appendChild(el('summary',null,'JSON'));raw.addEventListener('toggle',function(){if(raw.open&&raw.childNodes.length===1)raw.appendChild(pre(null,JSON.stringify(row(i),null,2)));});b.appendChild(raw);return d;}
function renderPath(upto){upto=Math.min(upto,path.length);while(pathDone<upto){var k=pathDone++,i=path[k];if(tools[i]){if(liOf[i])rows[i]=undefined;continue;}var e=entryEl(i,k);if(e)MAIN.appendChild(e);if(liOf[i])rows[i]=undefined;}}
function select(i,scroll){if(i<0||i>=nodes.length)return;var old=selected;selected=i;if(old>=0)refreshNode(old);
if(pathPos[i]===undefined)setPath(pathThrough(i));
followLeaf=leafIdx>=0&&pathPos[leafIdx]!==undefined;refreshNode(i);
var li=revealNode(i);if(li){li.className=nodeClasses(i);}
renderPath(pathPos[i]+1);var e=D.getElementById('entry-'+nodes[i][0]);MAIN.querySelectorAll('.entry.sel').forEach(function(x){x.classList.remove('sel');});if(e){var c=e.closest('.entry');if(c)c.classList.add('sel');if(scroll!==false)e.scrollIntoView({block:'start'});}
if(li&&scroll!==false){var s=D.getElementById('side'),r=li.getBoundingClientRect(),sr=s.getBoundingClientRect();if(r.top<sr.top||r.bottom>sr.bottom)s.scrollTop+=r.top-sr.top-sr.height/3;}
schedule();}
function hash(){var h=decodeURIComponent(location.hash.slice(1)),id=h.slice(0,6)==='entry-'?h.slice(6):h.slice(0,2)==='e-'?h.slice(2):null;if(id==null||!nodes.length)return;var i=byId[id];if(i!==undefined)select(i);}
// ---- search and filters ----
function applyFilter(){VIEW.className='m-'+filter;D.querySelectorAll('.filters button').forEach(function(b){b.classList.toggle('on',b.getAttribute('data-filter')===filter);});var tokens=query.toLowerCase().split(/\s+/).filter(Boolean),n=0,hits=[];
for(var i=0;i<nodes.length;i++)if(passes(i,filter)&&matches(i,tokens)){n++;if(tokens.length&&hits.length<1000)hits.push(i);}
if(tokens.length){RES.replaceChildren();hits.forEach(function(i){var li=el('li',nodeClasses(i));li.setAttribute('data-hit',nodes[i][0]);li.appendChild(nodeLink(i));RES.appendChild(li);});RES.hidden=false;TREE.hidden=true;}else{RES.hidden=true;TREE.hidden=false;}
COUNT.textContent=thousands(n)+' of '+thousands(nodes.length)+' entries'+(tokens.length?' match':' shown')+(n>hits.length&&tokens.length?' (first '+thousands(hits.length)+' listed)':'');return n;}
// ---- totals ----
function totals(){var T=D.getElementById('totals');if(!T)return;T.replaceChildren();var t=meta.totals;if(!t)return;var dl=el('dl','totals');
function item(name,key,val,text){dl.appendChild(el('dt',null,name));var dd=el('dd');var s=el('span',null,text!=null?text:thousands(val));s.setAttribute('data-total',key);s.setAttribute('data-value',String(val));dd.appendChild(s);dl.appendChild(dd);return dd;}
var dd=item('Messages','messages',t.messages);var roles=t.byRole||{},parts=Object.keys(roles).map(function(r){return r+' '+thousands(roles[r]);});if(parts.length){dd.appendChild(D.createTextNode(' ('));Object.keys(roles).forEach(function(r,k){if(k)dd.appendChild(D.createTextNode(', '));dd.appendChild(D.createTextNode(r+' '));var s=el('span',null,thousands(roles[r]));s.setAttribute('data-total','byRole.'+r);s.setAttribute('data-value',String(roles[r]));dd.appendChild(s);});dd.appendChild(D.createTextNode(')'));}
item('Tool calls','toolCalls',t.toolCalls);item('Input tokens','input',t.input);item('Output tokens','output',t.output);item('Cache read','cacheRead',t.cacheRead);item('Cache write','cacheWrite',t.cacheWrite);item('Total tokens','totalTokens',t.totalTokens);
item('Cost','cost',t.cost,'$'+Number(t.cost).toFixed(3));if(t.models&&t.models.length)item('Models','models',t.models.length,t.models.join(', '));T.appendChild(dl);}
// ---- loading ----
function index(){var nl=buf.indexOf(10);meta=JSON.parse(dec.decode(buf.subarray(0,nl)));BODY=nl+1;nodes=meta.n;for(var i=0;i<nodes.length;i++){byId[nodes[i][0]]=i;if(nodes[i][6]&2)leafIdx=i;}
var pos=BODY+meta.file+meta.extra;while(pos<buf.length){var e=buf.indexOf(10,pos);if(e<0)e=buf.length;var k=0,q=pos+1;while(q<e&&buf[q]>=48&&buf[q]<=57){k=k*10+buf[q]-48;q++;}if(k<nodes.length)mdAt[k]=[pos,e];pos=e+1;}}
// performance marks (viewer:unpacked, viewer:rendered, viewer:tree) time the phases for benchmarks.
function mark(n){if(performance.mark)performance.mark('viewer:'+n);}
function load(bytes){mark('unpacked');reset();buf=bytes instanceof Uint8Array?bytes:new Uint8Array(bytes);index();var l=D.getElementById('loading');if(l)l.remove();totals();buildTree();
var start=leafIdx>=0?leafIdx:(nodes.length?meta.roots[meta.roots.length-1]:-1);if(start>=0){setPath(pathThrough(start));if(SYNC)renderPath(path.length);}applyFilter();
var h=location.hash;if(/^#(entry-|e-)/.test(h))hash();else schedule();mark('rendered');}
// ---- live updates ----
function append(list,leafId){if(!meta)return 0;var last=null,fresh=[],newFork=false;(list||[]).forEach(function(it){var text=typeof it==='string'?it:it&&it.row;if(typeof text!=='string')return;added.push(text);var v;try{v=JSON.parse(text);}catch(e){return;}
if(!v||typeof v!=='object'||typeof v.id!=='string'||v.type==='session'||v.type==='leaf'||byId[v.id]!==undefined)return;var i=nodes.length,r=v.type==='message'&&v.message&&typeof v.message.role==='string'?v.message.role:null;
var p=typeof v.parentId==='string'&&byId[v.parentId]!==undefined?byId[v.parentId]:-1;var so=v.message&&v.message.stopReason,fl=r==='assistant'&&!hasText(v.message.content)&&!(so&&so!=='stop'&&so!=='toolUse')?8:0;nodes.push([v.id,String(v.type),r||(v.type==='message'?'message':String(v.type)),null,v.id.slice(0,8),null,fl,[],text.length,-1]);byId[v.id]=i;rowText[i]=text;rows[i]=v;if(it.md)md[i]=it.md;
meta.parent.push(p);meta.size.push(1);if(p>=0){nodes[p][7].push(i);if(nodes[p][7].length===2)newFork=true;else if(nodes[p][7].length>2)newFork=true;for(var j=p;j>=0;j=meta.parent[j])meta.size[j]++;}else{meta.roots.push(i);if(meta.roots.length>1)newFork=true;}
if(v.type==='label'&&typeof v.targetId==='string'&&byId[v.targetId]!==undefined){var t=byId[v.targetId];nodes[t][5]=v.label?String(v.label):null;searchText[t]=undefined;refreshNode(t);}
last=v.id;fresh.push(i);});
var leaf=leafId!=null&&byId[leafId]!==undefined?byId[leafId]:(last!=null?byId[last]:leafIdx),old=leafIdx,wasFollowing=followLeaf;setLeaf(leaf);
if(newFork){var sel=selected;buildTree();if(sel>=0)revealNode(sel);}else fresh.forEach(function(i){var p=meta.parent[i],c=p>=0?chainOf[p]:null;if(!liOf[i]&&c&&c.next<0&&liOf[p]){c.next=i;fill(c,Infinity);}});
if(wasFollowing&&leafIdx>=0){var lastOnPath=path[path.length-1];if(leafIdx!==old&&pathPos[leafIdx]===undefined){var grows=true;for(var j=meta.parent[leafIdx],steps=0;j>=0&&j!==lastOnPath&&steps<fresh.length+1;j=meta.parent[j],steps++){if(fresh.indexOf(j)<0){grows=false;break;}}
if(grows&&lastOnPath!==undefined){var ext=[];for(j=leafIdx;j!==lastOnPath&&j>=0;j=meta.parent[j])ext.push(j);if(j===lastOnPath){ext.reverse();ext.forEach(function(x){pathPos[x]=path.length;path.push(x);});}else setPath(pathThrough(leafIdx));}else setPath(pathThrough(leafIdx));}
followLeaf=true;if(SYNC)renderPath(path.length);}
applyFilter();schedule();return fresh.length;}
function setLeaf(leaf){if(leaf===leafIdx)return;var j,k;for(j=leafIdx;j>=0;j=meta.parent[j]){nodes[j][6]&=~3;refreshNode(j);}leafIdx=leaf;
for(j=leafIdx,k=0;j>=0&&k<=nodes.length;j=meta.parent[j],k++){nodes[j][6]|=1;refreshNode(j);}if(leafIdx>=0){nodes[leafIdx][6]|=2;refreshNode(leafIdx);}
MAIN.querySelectorAll('.entry.leaf').forEach(function(e){e.classList.remove('leaf');});}
function jsonl(){if(!buf)return new Blob([]);var parts=[buf.subarray(BODY,BODY+meta.file)];added.forEach(function(t){parts.push(enc.encode(t+'\n'));});return new Blob(parts,{type:'application/x-ndjson'});}
function download(){var b=jsonl(),u=URL.createObjectURL(b),a=el('a');a.href=u;var id=D.querySelector('dl.meta dd code');a.download=(id?id.textContent:'session')+'.jsonl';D.body.appendChild(a);a.click();a.remove();setTimeout(function(){URL.revokeObjectURL(u);},1000);}
window.SESSION_VIEWER={load:load,append:append,select:function(id){var i=byId[id];if(i!==undefined)select(i);return i!==undefined;},leaf:function(){return leafIdx>=0?nodes[leafIdx][0]:null;},jsonl:jsonl,totals:function(){return meta?meta.totals:null;},
state:function(){return {entries:nodes.length,filter:filter,query:query,visible:applyFilter()};}};
window.addEventListener('hashchange',hash);
if(SEARCH)SEARCH.addEventListener('input',function(){query=SEARCH.value;if(meta)applyFilter();});
D.addEventListener('click',function(ev){var f=ev.target.closest('button[data-filter]');if(f){filter=f.getAttribute('data-filter');if(meta)applyFilter();return;}
var b=ev.target.closest('button[data-act]');if(!b)return;var act=b.getAttribute('data-act');
if(act==='leaf'){if(leafIdx>=0)select(leafIdx);}
else if(act==='thinking'){var on=D.body.classList.toggle('hide-thinking');b.textContent=on?'Show thinking':'Hide thinking';}
else if(act==='tools'){var t=D.body.classList.toggle('hide-tools');b.textContent=t?'Show tool output':'Hide tool output';}
else if(act==='download')download();
else if(act==='branches-open'||act==='branches-close')D.querySelectorAll('details.branch').forEach(function(d){d.open=act==='branches-open';});});
var enc0=P.getAttribute('data-enc'),text=P.textContent.trim();
function fail(e){var n=D.getElementById('loading');if(n)n.textContent='This page could not unpack its data: '+e;}
mark('start');
if(enc0==='base64'){load(b64(text));}
else if(enc0==='deflate-raw'){Promise.all(text.split('\n').map(function(c){return inflate(b64(c));})).then(function(parts){load(concat(parts));}).catch(fail);}
else if(enc0==='url'){fetch(P.getAttribute('data-src'),{credentials:'same-origin'}).then(function(r){if(!r.ok)throw new Error('HTTP '+r.status);return r.arrayBuffer();}).then(load).catch(fail);}
})();
